-- fair_release: releases one level of an owner's hold of a fair lock, and
-- hands the lock to the head of the queue when it is free.
--
-- KEYS[1]  lock hash, as in fair_acquire
-- ARGV[1]  owner string
-- ARGV[2]  request id; a retry sends the same id
-- ARGV[3]  publish command: "publish" or "spublish"
-- ARGV[4]  channel of the lock
-- ARGV[5]  retention of the hash once free, in ms
-- ARGV[6]  how long the applied set remembers a request, in ms
-- ARGV[7]  "" or an acquire request: release only if the hold's last
--          request is that one (undo of a cancelled or unknown acquisition)
-- (ARGV[1..7] are the same for every kind's release: src/lock/release.c)
--
-- Replies  {1, count}  released one level; count levels remain (0: freed,
--                      and granted to the first live waiter, if any, which
--                      was named in a message)
--          {0}         the owner does not hold the lock (nothing changed)
--
-- Retries are idempotent as in lock_release (one applied record per owner
-- in the hash). A free lock goes straight to the head (lib/fairq:
-- fairq_handoff): its try then only confirms, so no newcomer can take the
-- lock in between and the head's wake-up costs one round trip. A
-- hand-off is 7 commands (HMGET, TIME, HMGET of the front, HDEL, HSET,
-- PUBLISH to the head, PUBLISH of the new second's deadline).
--@include clock
--@include applied
--@include release
--@include waiters
--@include fairq

local me = ARGV[1]
local h = redis.call('HMGET', KEYS[1], 'o', 'n', 't', 'r', 'e', 'qh', 'qt',
    'qn', 'x', 'dn', 'dp', 'g', 'gs', 'd:' .. me)
local now, us = clock_now()

-- A grant not yet confirmed (count 0) is not held, nor is a hold whose
-- lease ran out.
local held = h[1] == me and h[2] ~= '0' and tonumber(h[5] or '0') > now
local r = release_level(KEYS[1], held, h[2], h[4], h[14], ARGV[2], ARGV[7],
    'n', 'r')
if r then
    return r
end
local set = {'o', ''}
fairq_handoff(KEYS[1], h, now, us, set, me, ARGV[3], ARGV[4])
local pttl = fair_keep(h[9], now, now, tonumber(ARGV[5]), set)
applied_add(KEYS[1], 'd:' .. me, ARGV[2], {h[10], h[11], h[12], h[13]},
    tonumber(ARGV[6]), set, not h[14])
if pttl then
    redis.call('PEXPIRE', KEYS[1], pttl)
end
return {1, 0}
