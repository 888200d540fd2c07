-- lock_force_release: frees the lock whoever holds it.
--
-- KEYS[1]  lock hash, as in lock_acquire
-- ARGV[1]  publish command: "publish" or "spublish"
-- ARGV[2]  channel of the lock
-- ARGV[3]  request id; a retry sends the same id
-- ARGV[4]  how long the applied set remembers a request, in ms
-- (ARGV[1..4] are the same for every kind: src/lock/scripted.c)
--
-- Replies  1  the lock was held and is now free (a waiter was woken)
--          0  the lock was free
--
-- A retry (the reply was lost) gets the first answer again and frees
-- nothing more (lib/force). The token stays in the hash: the next
-- holder's token is larger than the token of the hold that was removed.
--@include clock
--@include applied
--@include force
--@include waiters
local first = force_replay(KEYS[1], ARGV[3])
if first then
    return first
end
local h = redis.call('HMGET', KEYS[1], 'o', 'qh', 'qt')
if not h[1] or h[1] == '' then
    return force_done(KEYS[1], ARGV[3], 0, tonumber(ARGV[4]))
end
local woken, head = nil, nil
if waiters_maybe(h[2], h[3]) then
    woken, head = waiter_next(KEYS[1], h[2], h[3])
    redis.call('HSET', KEYS[1], 'o', '', 'qh', head)
else
    redis.call('HSET', KEYS[1], 'o', '')
end
force_done(KEYS[1], ARGV[3], 1, tonumber(ARGV[4]))
waiter_wake(ARGV[1], ARGV[2], woken)
return 1
