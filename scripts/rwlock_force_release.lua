-- rwlock_force_release: frees a read-write lock, readers and writer alike.
--
-- KEYS[1]  hold, as in rwlock_acquire
-- KEYS[2]  fence, as in rwlock_acquire (its applied set)
-- KEYS[3]  waiting writers, as in rwlock_acquire (not read here)
-- ARGV[1]  publish command: "publish" or "spublish"
-- ARGV[2]  channel of the lock
-- ARGV[3]  request id; a retry sends the same id
-- ARGV[4]  how long the applied set remembers a request, in ms
-- (ARGV[1..4] are the same for every kind: src/lock/scripted.c)
--
-- Replies  1  someone held it and it is now free (every waiter woken)
--          0  it was free
-- A retry (the reply was lost) gets the first answer again and frees
-- nothing more (lib/force). The fence is left alone otherwise: the next
-- holder's token must still be larger than the token of the hold that was
-- removed.
--@include clock
--@include applied
--@include force
local first = force_replay(KEYS[2], ARGV[3])
if first then
    return first
end
if redis.call('DEL', KEYS[1]) == 0 then
    return force_done(KEYS[2], ARGV[3], 0, tonumber(ARGV[4]))
end
redis.pcall(ARGV[1], ARGV[2], '1')
return force_done(KEYS[2], ARGV[3], 1, tonumber(ARGV[4]))
