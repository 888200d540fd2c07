-- semaphore_renew: the watchdog's batched lease renewal of semaphore holders.
--
-- KEYS[2i-1], KEYS[2i]  hash and expiries of the i-th hold (lib/sem)
-- ARGV[1]    lease in ms (the client's watchdog lease)
-- ARGV[1+i]  owner string of the i-th hold
--
-- Replies  {r1, r2, ...}  one per hold: 1 renewed (all of the owner's
--                         permits), 0 the owner holds none any more
--                         (released, expired, force-released): nothing
--                         changed
--
-- A holder whose lease ended is gone even if not yet dropped. A lease is
-- never shortened.
--@include clock
--@include renew
local now = clock_now()
local lease = tonumber(ARGV[1])
return renew_all(#ARGV - 1, function(i)
    local h, x, me = KEYS[2 * i - 1], KEYS[2 * i], ARGV[i + 1]
    local at = tonumber(redis.call('ZSCORE', x, me) or '0')
    if at <= now then
        return false
    end
    if now + lease > at then
        redis.call('ZADD', x, now + lease, me)
    end
    keep_ttl(h, lease)
    keep_ttl(x, lease)
    return true
end)
