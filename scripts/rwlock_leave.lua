-- rwlock_leave: takes a writer that gave up out of the waiting writers, and
-- wakes every waiter if that lets readers in; else it names the next live
-- writer, in case the wake-up of a free lock was meant for this one.
--
-- KEYS[1..3] hold, fence, waiting writers, as in rwlock_acquire (the keys of
--          every rw script; only the waiting writers are read here)
-- ARGV[1]  owner string
-- ARGV[2]  publish command: "publish" or "spublish"
-- ARGV[3]  channel of the lock
--
-- Replies  1  removed;  0  was not waiting
--@include clock
if redis.call('ZREM', KEYS[3], ARGV[1]) == 0 then
    return 0
end
-- Only writers whose entry is still alive hold readers back: a dead
-- writer's entry (its waiter crashed) must not keep them asleep.
local now = clock_now()
local first = redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. now, '+inf',
    'LIMIT', 0, 1)[1]
if first then
    redis.pcall(ARGV[2], ARGV[3], first)
else
    redis.pcall(ARGV[2], ARGV[3], '1')
end
return 1
