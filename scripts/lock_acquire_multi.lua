-- lock_acquire_multi: takes or re-enters n reentrant locks of one cluster
-- slot at once, or none of them (the MultiLock's one-call path).
--
-- KEYS[1..n]  lock hashes, as in lock_acquire
-- ARGV[1]  owner string
-- ARGV[2]  lease in ms (> 0)
-- ARGV[3]  request id; a retry sends the same id
-- ARGV[4]  publish command: "publish" or "spublish"
-- ARGV[4+i] channel of lock i
--
-- Replies  {1, token1, count1, ..., tokenN, countN}  all taken or re-entered
--          {0, pttl, i}  lock i (1-based) is held by another owner for
--                        pttl more ms; nothing changed (the caller is not
--                        registered as a waiter)
--
-- A retry of an applied request finds every hold marked with its id and
-- returns the same tokens, without counting again. Tokens as lock_acquire.
--@include waiters
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

local base
for i = 1, #KEYS do
    local h = holds[i]
    if h[1] == me then
        local c = tonumber(h[2]) + 1
        redis.call('HSET', KEYS[i], 'n', c, 'r', ARGV[3])
        if redis.call('PTTL', KEYS[i]) < lease then
            redis.call('PEXPIRE', KEYS[i], lease)
        end
        out[#out + 1] = tonumber(h[3])
        out[#out + 1] = c
    else
        if not base then
            local t = redis.call('TIME')
            base = tonumber(t[1]) * 1000000 + tonumber(t[2])
        end
        local token = math.max(tonumber(h[3] or '0') + 1, base)
        redis.call('HSET', KEYS[i], 'o', me, 'n', 1, 't',
            string.format('%d', token), 'r', ARGV[3])
        redis.call('PEXPIRE', KEYS[i], lease)
        if h[5] then
            waiter_remove(KEYS[i], me, h[5])
        end
        -- As lock_acquire: the first waiter learns the new lease.
        if waiters_maybe(h[6], h[7]) then
            waiter_recap(KEYS[i], h[6], h[7], me, lease, ARGV[4], ARGV[4 + i])
        end
        out[#out + 1] = token
        out[#out + 1] = 1
    end
end
return out
