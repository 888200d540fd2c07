-- rw_force_release: frees a read-write lock, readers and writer alike.
--
-- KEYS[1]  hold, as in rw_acquire
-- ARGV[1]  publish command: "publish" or "spublish"
-- ARGV[2]  channel of the lock
--
-- Replies  1  someone held it and it is now free (every waiter woken)
--          0  it was free
if redis.call('DEL', KEYS[1]) == 0 then
    return 0
end
redis.pcall(ARGV[1], ARGV[2], '1')
return 1
