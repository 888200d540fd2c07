-- fair_info: the state of a fair lock and of one owner.
--
-- KEYS[1..4] hold, fence, queue, expiry, as in fair_acquire
-- ARGV[1]  owner string
--
-- Replies  {locked, count, pttl, token, waiters, position, held}
--          locked    1 if anyone holds it
--          count     the owner's hold count (0 if it holds none)
--          pttl      remaining lease in ms, -2 if not locked
--          token     latest fencing token issued for the name, 0 if none
--          waiters   live entries in the queue
--          position  the owner's place in the queue (1: next), 0 if none
--          held      the holder's hold count, whoever it is (0 if free)
--
-- Read-only: dead entries not yet purged are left alone and not counted.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local h = redis.call('HMGET', KEYS[1], 'o', 'n')
local count = 0
if h[1] == ARGV[1] then
    count = tonumber(h[2])
end
local locked = 0
if h[1] then
    locked = 1
end
local waiters = redis.call('ZCOUNT', KEYS[4], '(' .. now, '+inf')
local position = 0
local mine = redis.call('ZSCORE', KEYS[4], ARGV[1])
if mine and tonumber(mine) > now then
    local place = redis.call('ZSCORE', KEYS[3], ARGV[1])
    if place then
        -- The rank, less the dead entries ahead that no write has purged
        -- yet (few: every write purges them).
        position = redis.call('ZRANK', KEYS[3], ARGV[1]) + 1
        local gone = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now)
        for _, m in ipairs(gone) do
            local p = redis.call('ZSCORE', KEYS[3], m)
            if p and tonumber(p) < tonumber(place) then
                position = position - 1
            end
        end
    end
end
local token = tonumber(redis.call('HGET', KEYS[2], 't') or '0')
return {locked, count, redis.call('PTTL', KEYS[1]), token, waiters, position,
    tonumber(h[2] or '0')}
