-- lock_renew: the watchdog's batched lease renewal of reentrant holds.
--
-- KEYS[i]    hold hash of the i-th hold, as in lock_acquire
-- ARGV[1]    lease in ms (the client's watchdog lease)
-- ARGV[1+i]  owner string of the i-th hold
--
-- Replies  {r1, r2, ...}  one per key: 1 renewed, 0 the hold is gone or
--                         belongs to another owner (nothing changed)
--
-- Only an existing hold of the same owner is extended, so a renewal that
-- runs after a release never brings the lock back. A lease is never
-- shortened (a re-entry with a longer fixed lease keeps it). Per hold:
-- HGET and PEXPIRE ... GT (Redis 7.0 and later), or HGET, PTTL and
-- PEXPIRE (lib/clock: keep_lease).
--@include clock
--@include renew
local lease = tonumber(ARGV[1])
return renew_all(#KEYS, function(i)
    if redis.call('HGET', KEYS[i], 'o') ~= ARGV[i + 1] then
        return false
    end
    keep_lease(KEYS[i], lease)
    return true
end)
