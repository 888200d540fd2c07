-- fair_force_release: frees a fair lock whoever holds it, and hands it to
-- the head of the queue.
--
-- KEYS[1]  hold, KEYS[2] queue, KEYS[3] expiry, as in fair_acquire
-- KEYS[4]  fence, as in fair_acquire (its applied set)
-- ARGV[1]  publish command: "publish" or "spublish"
-- ARGV[2]  channel of the lock
-- ARGV[3]  request id; a retry sends the same id
-- ARGV[4]  how long the applied set remembers a request, in ms
-- (ARGV[1..4] are the same for every kind: src/lock/scripted.c)
--
-- Replies  1  the lock was held and is now free
--          0  the lock was free
--
-- A retry (the reply was lost) gets the first answer again and frees
-- nothing more (lib/force). The fence is left alone otherwise: the next
-- holder's token must still be larger than the token of the hold that was
-- removed.
--@include applied
--@include force
--@include second
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local first = force_replay(KEYS[4], ARGV[3])
if first then
    return first
end
if redis.call('DEL', KEYS[1]) == 0 then
    return force_done(KEYS[4], ARGV[3], 0, now, tonumber(ARGV[4]))
end
local before = redis.call('ZRANGE', KEYS[2], 0, 1)
local dead = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, 64)
if #dead > 0 then
    redis.call('ZREM', KEYS[3], unpack(dead))
    redis.call('ZREM', KEYS[2], unpack(dead))
end
-- As in fair_release: the head takes over, a new second watches it.
local after = redis.call('ZRANGE', KEYS[2], 0, 1)
if after[1] then
    redis.pcall(ARGV[1], ARGV[2], after[1])
end
if after[2] and after[2] ~= before[2] then
    tell_second(KEYS[3], ARGV[1], ARGV[2], after[2], after[1], now)
end
return force_done(KEYS[4], ARGV[3], 1, now, tonumber(ARGV[4]))
