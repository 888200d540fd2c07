-- sem_renew: the watchdog's batched lease renewal of semaphore holders.
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
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[1])
local out = {}
for i = 1, #ARGV - 1 do
    local h, x, me = KEYS[2 * i - 1], KEYS[2 * i], ARGV[i + 1]
    local at = tonumber(redis.call('ZSCORE', x, me) or '0')
    if at > now then
        if now + lease > at then
            redis.call('ZADD', x, now + lease, me)
        end
        for _, k in ipairs({h, x}) do
            if redis.call('PTTL', k) < lease then
                redis.call('PEXPIRE', k, lease)
            end
        end
        out[i] = 1
    else
        out[i] = 0
    end
end
return out
