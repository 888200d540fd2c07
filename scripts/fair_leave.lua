-- fair_leave: takes a waiter that gave up out of a fair lock's queue, and
-- passes on a hand-off it was granted but never confirmed.
--
-- KEYS[1]  lock hash, as in fair_acquire
-- ARGV[1]  owner string
-- ARGV[2]  publish command: "publish" or "spublish"
-- ARGV[3]  channel of the lock
--
-- Replies  1  the entry (or the grant) was removed
--          0  there was none
--
-- A waiter that gave up may have been handed the lock (count 0) by a
-- release it did not act on: the grant goes to the next live waiter, as
-- a release would have done. If the leaver was first or second, the new
-- first and second are told their duty (lib/fairq). Idempotent: a retry
-- finds nothing of the owner left.
--@include clock
--@include waiters
--@include fairq
local me = ARGV[1]
local h = redis.call('HMGET', KEYS[1], 'o', 'n', 't', 'r', 'e', 'qh', 'qt',
    'qn', 'x', 'q:' .. me)
local now, us = clock_now()
local e = tonumber(h[5] or '0')
local set = {}

-- Removes the leaver's entry, and the lapsed ones met at the front;
-- returns its rank among the first three live entries (nil if further
-- back or lapsed) and those entries.
local function remove()
    local live, drop, rest = fairq_front(KEYS[1], h[6], h[7], now, 3)
    local rank, mine = nil, 's:' .. h[10]
    for i = 1, #live do
        if live[i].owner == me then
            rank = i
        end
    end
    for i = 1, #drop, 2 do
        if drop[i] == mine then
            rank = 0 -- lapsed, and dropped with the others
        end
    end
    if not rank then
        drop[#drop + 1] = mine
        drop[#drop + 1] = 'q:' .. me
    end
    fairq_pop(KEYS[1], live, drop, rest, rank or 0, tonumber(h[8]), set)
    h[6], h[8] = set[2], set[4] -- set was empty: {'qh', qh, 'qn', qn}
    return rank, live
end

local rank, live, gave = nil, {}, h[1] == me and h[2] == '0'
if h[10] then
    rank, live = remove()
end
if gave then
    e = 0 -- the grant is given up
    set[#set + 1] = 'o'
    set[#set + 1] = ''
end
if not h[1] or h[1] == '' or e <= now then
    fairq_handoff(KEYS[1], h, now, us, set, me, ARGV[2], ARGV[3])
elseif rank == 1 then
    fairq_tell(live, e, now, me, ARGV[2], ARGV[3])
elseif rank == 2 and live[3] then
    waiter_say(ARGV[2], ARGV[3], live[3].owner,
        live[3].owner .. '|' .. math.max(live[1].lapse - now, 1))
end
if #set > 0 then
    redis.call('HSET', KEYS[1], unpack(set))
end
if h[10] or gave then
    return 1
end
return 0
