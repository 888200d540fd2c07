-- fair_touch: the watchdog's batched renewal of waiters' queue entries in
-- fair locks.
--
-- KEYS[i]    lock hash of the i-th entry's lock (fair_acquire)
-- ARGV[1]    queue lease in ms
-- ARGV[1+i]  owner string of the i-th entry
--
-- Replies  {r1, r2, ...}  one per key: 1 renewed, 0 the entry is gone
--                         (lapsed, dropped, or the waiter was granted the
--                         lock, acquired or left)
--
-- An entry whose lapse has passed is dead even if not yet dropped: it is
-- not brought back. The entry keeps its seq (its place). The hash lives
-- at least as long as a renewed entry (lib/fairq: fair_keep).
--@include clock
--@include waiters
--@include fairq
--@include renew
local now = clock_now()
local lease = tonumber(ARGV[1])
return renew_all(#KEYS, function(i)
    local me = ARGV[i + 1]
    local h = redis.call('HMGET', KEYS[i], 'q:' .. me, 'x')
    local v = h[1] and redis.call('HGET', KEYS[i], 's:' .. h[1])
    if not v or tonumber(string.match(v, '^(%d+):')) <= now then
        return false
    end
    local set = {'s:' .. h[1], string.format('%d', now + lease) .. ':' .. me}
    fair_hset(KEYS[i], set, fair_keep(h[2], now + lease, now, 2 * lease, set))
    return true
end)
