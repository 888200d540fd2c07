-- lock_info: reads the state of a reentrant lock. Writes nothing.
--
-- KEYS[1]  hold   hash, as in lock_acquire
-- KEYS[2]  fence  hash, as in lock_acquire
-- ARGV[1]  owner string asked about
--
-- Reply    {locked, count, pttl, token, held}
--          locked  1 if anyone holds the lock, else 0
--          count   the asked owner's hold count (0 if it holds none)
--          pttl    remaining lease in ms; -2 if not locked
--          token   latest fencing token issued for the name (0 if none is
--                  remembered)
--          held    the holder's hold count, whoever it is (0 if free)
local h = redis.call('HMGET', KEYS[1], 'o', 'n', 't')
local token = tonumber(redis.call('HGET', KEYS[2], 't') or '0')
if h[3] and tonumber(h[3]) > token then
    token = tonumber(h[3])
end
if not h[1] then
    return {0, 0, -2, token, 0}
end
local count = 0
if h[1] == ARGV[1] then
    count = tonumber(h[2])
end
return {1, count, redis.call('PTTL', KEYS[1]), token, tonumber(h[2])}
