-- lock_force_release: frees the lock whoever holds it.
--
-- KEYS[1]  hold   hash, as in lock_acquire
-- ARGV[1]  publish command: "publish" or "spublish"
-- ARGV[2]  channel of the lock
--
-- Replies  1  the lock was held and is now free (waiters were woken)
--          0  the lock was free
--
-- The fence key is left alone: the next holder's token must still be larger
-- than the token of the hold that was removed.
if redis.call('DEL', KEYS[1]) == 0 then
    return 0
end
-- pcall: as in lock_release, a missing channel permission frees anyway.
redis.pcall(ARGV[1], ARGV[2], '0')
return 1
