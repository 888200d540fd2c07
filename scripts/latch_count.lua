-- latch_count: reads a latch's count. Writes nothing.
--
-- KEYS[1]  latch hash, as in latch_set
-- ARGV     none
--
-- Reply    {count, ttl}
--          count  the count, a decimal string ("0" if the latch is absent
--                 or expired)
--          ttl    ms until the latch expires; -2 if absent or expired
--@no-writes
--@include clock
local now = clock_now()
local h = redis.call('HMGET', KEYS[1], 'c', 'x')
local x = tonumber(h[2] or '0')
if not h[1] or x <= now then
    return {'0', -2}
end
return {h[1], x - now}
