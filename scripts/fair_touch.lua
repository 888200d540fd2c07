-- fair_touch: the watchdog's batched renewal of waiters' queue entries.
--
-- KEYS[i]    expiry sorted set of the i-th entry's lock (fair_acquire)
-- ARGV[1]    queue lease in ms
-- ARGV[1+i]  owner string of the i-th entry
--
-- Replies  {r1, r2, ...}  one per key: 1 renewed, 0 the entry is gone
--                         (purged as dead, or the waiter acquired or left)
--
-- An entry whose deadline has passed is dead even if not yet purged: it
-- is not brought back.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local until_ms = now + tonumber(ARGV[1])
local out = {}
for i = 1, #KEYS do
    local score = redis.call('ZSCORE', KEYS[i], ARGV[i + 1])
    if score and tonumber(score) > now then
        redis.call('ZADD', KEYS[i], 'XX', until_ms, ARGV[i + 1])
        out[i] = 1
    else
        out[i] = 0
    end
end
return out
