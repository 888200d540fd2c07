-- fair_leave: takes a waiter that gave up out of a fair lock's queue.
--
-- KEYS[1]  hold, KEYS[2] queue, KEYS[3] expiry, as in fair_acquire
-- ARGV[1]  owner string
-- ARGV[2]  publish command: "publish" or "spublish"
-- ARGV[3]  channel of the lock
--
-- Replies  1  the entry was removed
--          0  there was none
--
-- If the waiter was the head and the lock is free, the new head is told,
-- so it does not wait for a hand-off that will never come; a new second
-- waiter is told to watch the head.
--@include second
local before = redis.call('ZRANGE', KEYS[2], 0, 1)
if redis.call('ZREM', KEYS[2], ARGV[1]) == 0 then
    redis.call('ZREM', KEYS[3], ARGV[1])
    return 0
end
redis.call('ZREM', KEYS[3], ARGV[1])
-- A new head takes a free lock, or starts watching the holder's lease; a
-- new second watches the head (see fair_acquire's tell()).
local after = redis.call('ZRANGE', KEYS[2], 0, 1)
if after[1] and after[1] ~= before[1] then
    redis.pcall(ARGV[2], ARGV[3], after[1])
end
if after[2] and after[2] ~= before[2] then
    local t = redis.call('TIME')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    tell_second(KEYS[3], ARGV[2], ARGV[3], after[2], after[1], now)
end
return 1
