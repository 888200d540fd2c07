-- rwlock_touch: the watchdog's batched renewal of a read-write lock's waiting
-- writers' entries.
--
-- KEYS[i]    waiting-writer set of the i-th entry's lock (rwlock_acquire):
--            owner -> server time (ms) at which the entry is dead
-- ARGV[1]    queue lease in ms
-- ARGV[1+i]  owner string of the i-th entry
--
-- Replies  {r1, r2, ...}  one per key: 1 renewed, 0 the entry is gone
--                         (purged as dead, or the writer acquired or left)
--
-- An entry whose deadline has passed is dead even if not yet purged: it
-- is not brought back. The set lives at least as long as a renewed entry,
-- so a set whose waiters all died (no script runs on it again) goes away
-- with its last entry.
--@include clock
--@include renew
local now = clock_now()
local lease = tonumber(ARGV[1])
return renew_all(#KEYS, function(i)
    local score = redis.call('ZSCORE', KEYS[i], ARGV[i + 1])
    if not score or tonumber(score) <= now then
        return false
    end
    redis.call('ZADD', KEYS[i], 'XX', now + lease, ARGV[i + 1])
    keep_ttl(KEYS[i], lease)
    return true
end)
