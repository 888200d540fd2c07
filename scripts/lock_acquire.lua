-- lock_acquire: one try to take or re-enter a reentrant lock.
--
-- KEYS[1]  hold   hash {o = owner, n = hold count, t = fencing token,
--                       r = id of the last request applied}; PTTL = lease
-- KEYS[2]  fence  hash {t = last token issued, r = id of the release that
--                       last freed the lock}; outlives the hold
-- ARGV[1]  owner string "<client-id>:<owner>"
-- ARGV[2]  lease in ms (> 0)
-- ARGV[3]  request id, unique per request; a retry sends the same id
-- ARGV[4]  retention of the fence key after the lease, in ms
--
-- Replies  {1, token, count}  acquired (count 1) or re-entered (count > 1)
--          {0, pttl}          held by another owner for pttl more ms
--
-- A retry of a request that was applied (its reply was lost) returns the
-- same result instead of counting again. Tokens are max(last + 1, server
-- time in microseconds): strictly increasing while the fence key lives, and
-- still increasing after it expired or the data was lost, as long as the
-- server clock does not step back.
local h = redis.call('HMGET', KEYS[1], 'o', 'n', 't', 'r')
local lease = tonumber(ARGV[2])

if h[1] == ARGV[1] then
    if h[4] == ARGV[3] then
        return {1, tonumber(h[3]), tonumber(h[2])}
    end
    local n = redis.call('HINCRBY', KEYS[1], 'n', 1)
    redis.call('HSET', KEYS[1], 'r', ARGV[3])
    -- Re-entering never shortens the hold.
    if redis.call('PTTL', KEYS[1]) < lease then
        redis.call('PEXPIRE', KEYS[1], lease)
    end
    return {1, tonumber(h[3]), n}
end

if h[1] then
    return {0, redis.call('PTTL', KEYS[1])}
end

local now = redis.call('TIME')
local token = tonumber(now[1]) * 1000000 + tonumber(now[2])
local last = tonumber(redis.call('HGET', KEYS[2], 't') or '0')
if token <= last then
    token = last + 1
end
local ts = string.format('%d', token)
redis.call('HSET', KEYS[1], 'o', ARGV[1], 'n', 1, 't', ts, 'r', ARGV[3])
redis.call('PEXPIRE', KEYS[1], lease)
redis.call('HSET', KEYS[2], 't', ts)
redis.call('PEXPIRE', KEYS[2], lease + tonumber(ARGV[4]))
return {1, token, 1}
