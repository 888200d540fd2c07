-- fair_release: releases one level of an owner's hold of a fair lock, and
-- hands the lock to the head of the queue when it is free.
--
-- KEYS[1..4] hold, fence, queue, expiry, as in fair_acquire; the fence
--          also holds the applied set, as in lock_release
-- ARGV[1]  owner string
-- ARGV[2]  request id; a retry sends the same id
-- ARGV[3]  publish command: "publish" or "spublish"
-- ARGV[4]  channel of the lock
-- ARGV[5]  retention of the fence key, in ms
-- ARGV[6]  how long the applied set remembers a request, in ms
-- ARGV[7]  "" or an acquire request: release only if the hold's last
--          request is that one (undo of a cancelled or unknown acquisition)
--
-- Replies  {1, count}  released one level; count levels remain (0: freed,
--                      and the head of the queue, if any, was told by a
--                      message that carries its owner string)
--          {0}         the owner does not hold the lock (nothing changed)
--
-- Retries are idempotent as in lock_release.
--@include applied
--@include second

local h = redis.call('HMGET', KEYS[1], 'o', 'n', 'r', 't')

if h[1] ~= ARGV[1] then
    if redis.call('HEXISTS', KEYS[2], 'd:' .. ARGV[2]) == 1 then
        return {1, 0}
    end
    return {0}
end
if h[3] == ARGV[2] then
    return {1, tonumber(h[2])}
end
if ARGV[7] ~= '' and h[3] ~= ARGV[7] then
    return {0}
end

local n = tonumber(h[2]) - 1
if n > 0 then
    redis.call('HSET', KEYS[1], 'n', n, 'r', ARGV[2])
    return {1, n}
end
redis.call('DEL', KEYS[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
applied(KEYS[2], 'd:' .. ARGV[2], ARGV[2], now, tonumber(ARGV[6]), h[4])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
local before = redis.call('ZRANGE', KEYS[3], 0, 1)
local dead = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now, 'LIMIT', 0, 64)
if #dead > 0 then
    redis.call('ZREM', KEYS[4], unpack(dead))
    redis.call('ZREM', KEYS[3], unpack(dead))
end
-- The head takes over; a new second waiter starts watching the head (see
-- fair_acquire). pcall: see lock_release.
local after = redis.call('ZRANGE', KEYS[3], 0, 1)
if after[1] then
    redis.pcall(ARGV[3], ARGV[4], after[1])
end
if after[2] and after[2] ~= before[2] then
    tell_second(KEYS[4], ARGV[3], ARGV[4], after[2], after[1], now)
end
return {1, 0}
