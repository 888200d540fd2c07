-- fair_force_release: frees a fair lock whoever holds it, and hands it to
-- the head of the queue.
--
-- KEYS[1]  lock hash, as in fair_acquire (also its applied set)
-- ARGV[1]  publish command: "publish" or "spublish"
-- ARGV[2]  channel of the lock
-- ARGV[3]  request id; a retry sends the same id
-- ARGV[4]  how long the applied set remembers a request, in ms
-- (ARGV[1..4] are the same for every kind: src/lock/scripted.c)
--
-- Replies  1  the lock was held (or granted to a waiter that had not yet
--             confirmed) and is now free, or granted to the next waiter
--          0  the lock was free
--
-- A retry (the reply was lost) gets the first answer again and frees
-- nothing more (lib/force). The token stays in the hash: the next
-- holder's token is larger than the token of the hold that was removed.
--@include clock
--@include applied
--@include force
--@include waiters
--@include fairq
local now, us = clock_now()
local first = force_replay(KEYS[1], ARGV[3])
if first then
    return first
end
local h = redis.call('HMGET', KEYS[1], 'o', 'n', 't', 'r', 'e', 'qh', 'qt',
    'qn')
if not h[1] or h[1] == '' or tonumber(h[5] or '0') <= now then
    return force_done(KEYS[1], ARGV[3], 0, tonumber(ARGV[4]))
end
local set = {'o', ''}
fairq_handoff(KEYS[1], h, now, us, set, nil, ARGV[1], ARGV[2])
redis.call('HSET', KEYS[1], unpack(set))
return force_done(KEYS[1], ARGV[3], 1, tonumber(ARGV[4]))
