-- rwlock_renew: the watchdog's batched renewal of read-write holds.
--
-- KEYS[i]    hold hash of the i-th hold (rwlock_acquire)
-- ARGV[1]    lease in ms
-- ARGV[1+i]  "r:<owner>" or "w:<owner>": the side and owner of hold i
--
-- Replies  {r1, r2, ...}  1 renewed, 0 the hold is gone (expired, released
--                         or force-released): nothing changed
--
-- A hold whose own expiry has passed is gone even if not yet purged.
--@include clock
--@include renew
local now = clock_now()
local lease = tonumber(ARGV[1])
return renew_all(#KEYS, function(i)
    local m = ARGV[i + 1]
    local side, owner = string.sub(m, 1, 1), string.sub(m, 3)
    local xf, of = 'x:w', 'w'
    if side ~= 'w' then
        xf, of = 'x:r:' .. owner, 'r:' .. owner
    end
    local f = redis.call('HMGET', KEYS[i], of, xf)
    local x = tonumber(f[2] or '0')
    if not f[1] or (side == 'w' and f[1] ~= owner) or x <= now then
        return false
    end
    if now + lease > x then
        redis.call('HSET', KEYS[i], xf, now + lease)
    end
    keep_lease(KEYS[i], lease)
    return true
end)
