-- fair_touch: the watchdog's batched renewal of waiters' queue entries.
--
-- KEYS[2i-1] expiry sorted set of the i-th entry's lock (fair_acquire)
-- KEYS[2i]   the queue's order set (fair_acquire), or the expiry set again
--            (a read-write lock's waiting writers have one set)
-- ARGV[1]    queue lease in ms
-- ARGV[1+i]  owner string of the i-th entry
--
-- Replies  {r1, r2, ...}  one per key: 1 renewed, 0 the entry is gone
--                         (purged as dead, or the waiter acquired or left)
--
-- An entry whose deadline has passed is dead even if not yet purged: it
-- is not brought back. Both sets live at least as long as a renewed entry,
-- so a queue whose waiters all died (no script runs on it again) goes away
-- with its last entry.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local until_ms = now + tonumber(ARGV[1])
local out = {}
for i = 1, #KEYS / 2 do
    local exp, order = KEYS[2 * i - 1], KEYS[2 * i]
    local score = redis.call('ZSCORE', exp, ARGV[i + 1])
    if score and tonumber(score) > now then
        redis.call('ZADD', exp, 'XX', until_ms, ARGV[i + 1])
        for _, k in ipairs({exp, order}) do
            if redis.call('PTTL', k) < tonumber(ARGV[1]) then
                redis.call('PEXPIRE', k, ARGV[1])
            end
        end
        out[i] = 1
    else
        out[i] = 0
    end
end
return out
