-- lock_release: releases one level of an owner's hold.
--
-- KEYS[1]  lock hash, as in lock_acquire
-- ARGV[1]  owner string
-- ARGV[2]  request id; a retry sends the same id
-- ARGV[3]  publish command: "publish" or "spublish"
-- ARGV[4]  channel of the lock
-- ARGV[5]  retention of the hash once free, in ms
-- ARGV[6]  how long the applied set remembers a request, in ms (longer
--          than the client retries one)
-- ARGV[7]  "" for a release; or the id of an acquire request whose outcome
--          the client does not know (or that was cancelled): the level is
--          released only if the hold's last request is that one
-- (ARGV[1..7] are the same for every kind's release: src/lock/release.c)
--
-- Replies  {1, count}  released one level; count levels remain (0: freed,
--                      and the first registered waiter, if any, was named
--                      in a message)
--          {0}         the owner does not hold the lock (nothing changed)
--
-- A retry of an applied request returns the same result instead of
-- releasing again: the hold remembers the last request id, and the applied
-- set remembers the owner's release that freed the lock, however many
-- holds came and went since (docs/design-notes.md "Request ids").
-- Uncontended: 3 commands (HMGET, HSET, PEXPIRE), and no message when
-- nobody waits.
--@batch
--@include clock
--@include applied
--@include release
--@include waiters

local me = ARGV[1]
local h = redis.call('HMGET', KEYS[1], 'o', 'n', 'r', 'qh', 'qt', 'dn', 'dp',
    'g', 'gs', 'd:' .. me)

local r = release_level(KEYS[1], h[1] == me, h[2], h[3], h[10], ARGV[2],
    ARGV[7], 'n', 'r')
if r then
    return r
end
local set, woken = {'o', ''}, nil
if waiters_maybe(h[4], h[5]) then
    local head
    woken, head = waiter_next(KEYS[1], h[4], h[5])
    set[3] = 'qh'
    set[4] = head
end
applied_add(KEYS[1], 'd:' .. me, ARGV[2], {h[6], h[7], h[8], h[9]},
    tonumber(ARGV[6]), set, not h[10])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
waiter_wake(ARGV[3], ARGV[4], woken)
return {1, 0}
