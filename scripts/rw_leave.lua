-- rw_leave: takes a writer that gave up out of the waiting writers, and
-- wakes every waiter if that lets readers in.
--
-- KEYS[1]  waiting writers, as in rw_acquire
-- ARGV[1]  owner string
-- ARGV[2]  publish command: "publish" or "spublish"
-- ARGV[3]  channel of the lock
--
-- Replies  1  removed;  0  was not waiting
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then
    return 0
end
if redis.call('ZCARD', KEYS[1]) == 0 then
    redis.pcall(ARGV[2], ARGV[3], '1')
end
return 1
