-- fair_renew: the watchdog's batched lease renewal of fair-lock holds.
--
-- KEYS[i]    lock hash of the i-th hold (fair_acquire)
-- ARGV[1]    lease in ms (the client's watchdog lease)
-- ARGV[1+i]  owner string of the i-th hold
--
-- Replies  {r1, r2, ...}  one per key: 1 renewed, 0 the hold is gone, ran
--                         out or belongs to another owner (nothing changed)
--
-- The lease is the hash's field e (the hash outlives the hold, for the
-- queue's sake), so a renewal that runs after a release or after the lease
-- ran out finds no hold of the owner and never brings it back. A lease is
-- never shortened.
--@include clock
--@include waiters
--@include fairq
--@include renew
local now = clock_now()
local lease = tonumber(ARGV[1])
return renew_all(#KEYS, function(i)
    local h = redis.call('HMGET', KEYS[i], 'o', 'n', 'e', 'x')
    local e = tonumber(h[3] or '0')
    if h[1] ~= ARGV[i + 1] or h[2] == '0' or e <= now then
        return false
    end
    if e < now + lease then
        local set = {'e', string.format('%d', now + lease)}
        fair_hset(KEYS[i], set, fair_keep(h[4], now + lease, now, 2 * lease,
            set))
    end
    return true
end)
