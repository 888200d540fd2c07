-- lock_acquire_multi: takes or re-enters n reentrant locks of one cluster
-- slot at once, or none of them (the MultiLock's one-call path).
--
-- KEYS[1..n]     hold hashes, as in lock_acquire
-- KEYS[n+1..2n]  their fence hashes, in the same order
-- ARGV[1]  owner string
-- ARGV[2]  lease in ms (> 0)
-- ARGV[3]  request id; a retry sends the same id
-- ARGV[4]  retention of the fence keys after the lease, in ms
--
-- Replies  {1, token1, count1, ..., tokenN, countN}  all taken or re-entered
--          {0, pttl, i}  lock i (1-based) is held by another owner for
--                        pttl more ms; nothing changed
--
-- A retry of an applied request finds every hold marked with its id and
-- returns the same tokens, without counting again. Tokens as lock_acquire.
local n = #KEYS / 2
local lease = tonumber(ARGV[2])
local holds = {}
local replay = true
for i = 1, n do
    local h = redis.call('HMGET', KEYS[i], 'o', 'n', 't', 'r')
    if h[1] and h[1] ~= ARGV[1] then
        return {0, redis.call('PTTL', KEYS[i]), i}
    end
    if h[4] ~= ARGV[3] then
        replay = false
    end
    holds[i] = h
end

local out = {1}
if replay then
    for i = 1, n do
        out[#out + 1] = tonumber(holds[i][3])
        out[#out + 1] = tonumber(holds[i][2])
    end
    return out
end

local now = redis.call('TIME')
local base = tonumber(now[1]) * 1000000 + tonumber(now[2])
for i = 1, n do
    local h = holds[i]
    if h[1] == ARGV[1] then
        local c = redis.call('HINCRBY', KEYS[i], 'n', 1)
        redis.call('HSET', KEYS[i], 'r', ARGV[3])
        if redis.call('PTTL', KEYS[i]) < lease then
            redis.call('PEXPIRE', KEYS[i], lease)
        end
        out[#out + 1] = tonumber(h[3])
        out[#out + 1] = c
    else
        local fence = KEYS[n + i]
        local token = base
        local last = tonumber(redis.call('HGET', fence, 't') or '0')
        if token <= last then
            token = last + 1
        end
        local ts = string.format('%d', token)
        redis.call('HSET', KEYS[i], 'o', ARGV[1], 'n', 1, 't', ts, 'r',
            ARGV[3])
        redis.call('PEXPIRE', KEYS[i], lease)
        redis.call('HSET', fence, 't', ts)
        redis.call('PEXPIRE', fence, lease + tonumber(ARGV[4]))
        out[#out + 1] = token
        out[#out + 1] = 1
    end
end
return out
