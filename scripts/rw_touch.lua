-- rw_touch: the watchdog's batched renewal of a read-write lock's waiting
-- writers' entries.
--
-- KEYS[i]    waiting-writer set of the i-th entry's lock (rw_acquire):
--            owner -> server time (ms) at which the entry is dead
-- ARGV[1]    queue lease in ms
-- ARGV[1+i]  owner string of the i-th entry
--
-- Replies  {r1, r2, ...}  one per key: 1 renewed, 0 the entry is gone
--                         (purged as dead, or the writer acquired or left)
--
-- An entry whose deadline has passed is dead even if not yet purged: it
-- is not brought back. The set lives at least as long as a renewed entry,
-- so a set whose waiters all died (no script runs on it again) goes away
-- with its last entry.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local until_ms = now + tonumber(ARGV[1])
local out = {}
for i = 1, #KEYS do
    local score = redis.call('ZSCORE', KEYS[i], ARGV[i + 1])
    out[i] = 0
    if score and tonumber(score) > now then
        redis.call('ZADD', KEYS[i], 'XX', until_ms, ARGV[i + 1])
        if redis.call('PTTL', KEYS[i]) < tonumber(ARGV[1]) then
            redis.call('PEXPIRE', KEYS[i], ARGV[1])
        end
        out[i] = 1
    end
end
return out
