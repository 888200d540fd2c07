-- fair_acquire: one try to take, re-enter or queue for a fair lock.
--
-- KEYS[1]  hold   hash {o, n, t, r}, as in lock_acquire; PTTL = lease
-- KEYS[2]  fence  hash {t, r}, as in lock_acquire
-- KEYS[3]  queue  sorted set: waiting owner -> place (enqueue order)
-- KEYS[4]  expiry sorted set: waiting owner -> server time (ms) at which
--                 its entry is dead unless renewed (fair_touch)
-- ARGV[1]  owner string
-- ARGV[2]  lease in ms
-- ARGV[3]  request id; a retry sends the same id
-- ARGV[4]  retention of the fence key after the lease, in ms
-- ARGV[5]  queue lease in ms: how long the caller's queue entry lives
-- ARGV[6]  "wait": queue the caller if it cannot have the lock now;
--          "try": do not queue (a one-shot try)
-- ARGV[7]  publish command: "publish" or "spublish"
-- ARGV[8]  channel of the lock
--
-- Replies  {1, token, count}    acquired (count 1) or re-entered
--          {0, sleep, position} not acquired: sleep at most `sleep` ms
--                               (-1: no bound known) before trying again;
--                               position is the caller's place in the
--                               queue (1: next), 0 if not queued
--
-- The lock goes to the head of the queue: a newcomer takes it only when
-- the queue is empty. Entries are ordered by arrival at Redis and expire
-- by server time, so client clocks play no part. Every call first purges
-- up to 64 dead entries, wherever they stand (amortised O(1) per entry);
-- every other step is O(log n) in the queue length.
--
-- Who watches whom: the head waits for the holder (its sleep is capped by
-- the holder's lease, and the release names it in a message); the second
-- waits for the head (its sleep is capped by the head's entry expiry, so
-- a dead head is purged within a queue lease); the others wait for a
-- message. When a script changes who is first or second, it names the new
-- one in a message (see tell() below), so a waiter learns of its new duty.
--@include second
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local before = redis.call('ZRANGE', KEYS[3], 0, 1)
local dead = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now, 'LIMIT', 0, 64)
if #dead > 0 then
    redis.call('ZREM', KEYS[4], unpack(dead))
    redis.call('ZREM', KEYS[3], unpack(dead))
end

-- Names the new head and the new second waiter, if they changed and are
-- not the caller (who has its reply). A new head is told even while the
-- lock is held: as the second it slept on the old head's entry, and now it
-- must watch the holder's lease instead (its try says how long that is).
-- Else a holder whose lease runs out, which publishes nothing, left it
-- asleep on the wrong deadline while the lock was free.
local function tell()
    local after = redis.call('ZRANGE', KEYS[3], 0, 1)
    if after[1] and after[1] ~= before[1] and after[1] ~= ARGV[1] then
        redis.pcall(ARGV[7], ARGV[8], after[1])
    end
    if after[2] and after[2] ~= before[2] and after[2] ~= ARGV[1] then
        tell_second(KEYS[4], ARGV[7], ARGV[8], after[2], after[1], now)
    end
end

local lease = tonumber(ARGV[2])
local h = redis.call('HMGET', KEYS[1], 'o', 'n', 't', 'r')

if h[1] == ARGV[1] then
    if h[4] == ARGV[3] then
        return {1, tonumber(h[3]), tonumber(h[2])}
    end
    local n = redis.call('HINCRBY', KEYS[1], 'n', 1)
    redis.call('HSET', KEYS[1], 'r', ARGV[3])
    if redis.call('PTTL', KEYS[1]) < lease then
        redis.call('PEXPIRE', KEYS[1], lease)
    end
    tell()
    return {1, tonumber(h[3]), n}
end

-- Queues the caller (or renews its entry); returns its place.
local function queue()
    if ARGV[6] ~= 'wait' then
        return 0
    end
    if not redis.call('ZSCORE', KEYS[3], ARGV[1]) then
        local last = redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')
        local place = 1
        if last[2] then
            place = tonumber(last[2]) + 1
        end
        redis.call('ZADD', KEYS[3], place, ARGV[1])
    end
    redis.call('ZADD', KEYS[4], now + tonumber(ARGV[5]), ARGV[1])
    -- The sets live as long as their youngest entry, so a queue whose
    -- waiters all died goes away by itself (fair_touch keeps this up).
    for _, k in ipairs({KEYS[3], KEYS[4]}) do
        if redis.call('PTTL', k) < tonumber(ARGV[5]) then
            redis.call('PEXPIRE', k, ARGV[5])
        end
    end
    return redis.call('ZRANK', KEYS[3], ARGV[1]) + 1
end

-- Milliseconds until the head's entry expires (at least 1).
local function head_left(head)
    local left = tonumber(redis.call('ZSCORE', KEYS[4], head) or now) - now
    if left < 1 then
        return 1
    end
    return left
end

local head = redis.call('ZRANGE', KEYS[3], 0, 0)[1]
if h[1] or (head and head ~= ARGV[1]) then
    local pos = queue()
    local sleep = -1
    if h[1] then
        sleep = redis.call('PTTL', KEYS[1])
    end
    head = redis.call('ZRANGE', KEYS[3], 0, 0)[1]
    if head and head ~= ARGV[1] and (pos == 2 or not h[1]) then
        local left = head_left(head)
        if pos == 2 and (sleep < 0 or left < sleep) then
            sleep = left
        elseif not h[1] and pos ~= 2 then
            sleep = -1
        end
    end
    tell()
    return {0, sleep, pos}
end

if head then
    redis.call('ZREM', KEYS[3], ARGV[1])
    redis.call('ZREM', KEYS[4], ARGV[1])
end
local token = tonumber(t[1]) * 1000000 + tonumber(t[2])
local last = tonumber(redis.call('HGET', KEYS[2], 't') or '0')
if token <= last then
    token = last + 1
end
local ts = string.format('%d', token)
redis.call('HSET', KEYS[1], 'o', ARGV[1], 'n', 1, 't', ts, 'r', ARGV[3])
redis.call('PEXPIRE', KEYS[1], lease)
redis.call('HSET', KEYS[2], 't', ts)
redis.call('PEXPIRE', KEYS[2], lease + tonumber(ARGV[4]))
tell()
return {1, token, 1}
