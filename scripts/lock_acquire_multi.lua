-- lock_acquire_multi: takes or re-enters n reentrant locks of one cluster
-- slot at once, or none of them (the MultiLock's one-call path).
--
-- KEYS[1..n]  lock hashes, as in lock_acquire
-- ARGV[1..7] the acquire contract, as in lock_acquire, for every lock:
--          owner, lease, request id, "" (this script never waits: the
--          caller is not registered), publish command, channel of lock 1,
--          retention (not read here)
-- ARGV[7+i] channel of lock i
--
-- Replies  {1, token1, count1, ..., tokenN, countN}  all taken or re-entered
--          {0, pttl, i}  lock i (1-based) is held by another owner for
--                        pttl more ms; nothing changed (the caller is not
--                        registered as a waiter)
--
-- A retry of an applied request finds every hold marked with its id and
-- returns the same tokens, without counting again. Tokens as lock_acquire.
--@include clock
--@include waiters
--@include grant
local me = ARGV[1]
local lease = tonumber(ARGV[2])
local holds = {}
local replay = true
for i = 1, #KEYS do
    local h = redis.call('HMGET', KEYS[i], 'o', 'n', 't', 'r', 'q:' .. me,
        'qh', 'qt')
    if h[1] and h[1] ~= '' and h[1] ~= me then
        return {0, redis.call('PTTL', KEYS[i]), i}
    end
    if h[4] ~= ARGV[3] or h[1] ~= me then
        replay = false
    end
    holds[i] = h
end

local out = {1}
if replay then
    for i = 1, #KEYS do
        out[#out + 1] = tonumber(holds[i][3])
        out[#out + 1] = tonumber(holds[i][2])
    end
    return out
end

for i = 1, #KEYS do
    local h = holds[i]
    if h[1] == me then
        local c = tonumber(h[2]) + 1
        reenter(KEYS[i], c, ARGV[3], lease)
        out[#out + 1] = tonumber(h[3])
        out[#out + 1] = c
    else
        out[#out + 1] = grant(KEYS[i], me, ARGV[3], lease, h[3], h[5], h[6],
            h[7], ARGV[5], ARGV[7 + i])
        out[#out + 1] = 1
    end
end
return out
