-- lock_force_release: frees the lock whoever holds it.
--
-- KEYS[1]  hold   hash, as in lock_acquire
-- KEYS[2]  fence  hash, as in lock_acquire (its applied set)
-- ARGV[1]  publish command: "publish" or "spublish"
-- ARGV[2]  channel of the lock
-- ARGV[3]  request id; a retry sends the same id
-- ARGV[4]  how long the applied set remembers a request, in ms
-- (ARGV[1..4] are the same for every kind: src/lock/scripted.c)
--
-- Replies  1  the lock was held and is now free (waiters were woken)
--          0  the lock was free
--
--
-- A retry (the reply was lost) gets the first answer again and frees
-- nothing more (lib/force). The fence is left alone otherwise: the next
-- holder's token must still be larger than the token of the hold that was
-- removed.
--@include applied
--@include force
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local first = force_replay(KEYS[2], ARGV[3])
if first then
    return first
end
if redis.call('DEL', KEYS[1]) == 0 then
    return force_done(KEYS[2], ARGV[3], 0, now, tonumber(ARGV[4]))
end
-- pcall: as in lock_release, a missing channel permission frees anyway.
redis.pcall(ARGV[1], ARGV[2], '0')
return force_done(KEYS[2], ARGV[3], 1, now, tonumber(ARGV[4]))
