-- rwlock_acquire: one try to take or re-enter the read or the write side of a
-- read-write lock.
--
-- KEYS[1]  hold   hash: w = writer owner, wn = its count, wt = its token,
--                 wr = its last request id, x:w = its expiry (server ms);
--                 r:<owner> = a reader's count, x:r:<owner> its expiry,
--                 t:r:<owner> its token, q:r:<owner> its last request
--                 id. PTTL = the longest expiry, so an abandoned hash
--                 goes away on its own.
-- KEYS[2]  fence  hash {t = last token issued, rw = "1" while readers
--                 may be waiting, ws = the latest time (server ms) until
--                 which an answer let a waiter sleep, and the applied set
--                 (lib/applied)}
-- KEYS[3]  waiting writers: sorted set owner -> server-time expiry
-- ARGV[1..7] the acquire contract, as in lock_acquire: owner, lease,
--          request id, "" (a one-shot try) or the queue lease in ms (a
--          writer that cannot have the lock now is recorded as waiting,
--          its entry living that long unless renewed; a reader flags that
--          readers wait), publish command and channel (for the message
--          that tells waiters a shorter lease),
--          retention of the fence key after the lease
-- ARGV[8]  "r" (read side) or "w" (write side)
-- ARGV[9]  "1": writers first (new readers wait while a writer waits)
--
-- Replies  {1, token, count}      acquired or re-entered
--          {0, sleep, waiting}    not now: sleep at most `sleep` ms (-1:
--                                 no bound known); waiting 1 if the
--                                 caller is recorded as a waiting writer
--          {-1}                   the caller holds the read side and asked
--                                 for the write side (an upgrade would
--                                 wait on itself): nothing changed
--
-- Every holder has its own expiry, so a crashed reader's share ends with
-- its own lease, not with the longest one. Expired holders and waiting
-- writers are purged first (O(holders)).
--
-- A waiter sleeps at most until the time its answer gave (then tries
-- again: Redis publishes nothing when a lease runs out). A new hold whose
-- lease ends before the latest such time (ws) tells every waiter with the
-- message "|<lease ms>" to sleep no longer than that lease, else a writer
-- handed the lock that then dies would leave the others asleep on an
-- earlier holder's longer lease. With leases of one length no message
-- goes.
--@include clock
local now, us = clock_now()
local me, side, lease = ARGV[1], ARGV[8], tonumber(ARGV[2])

-- Purge expired holders; returns the longest expiry left (0 if none).
local function purge()
    local f = redis.call('HGETALL', KEYS[1])
    local longest = 0
    for i = 1, #f, 2 do
        local k, v = f[i], tonumber(f[i + 1])
        if k == 'x:w' then
            if v <= now then
                redis.call('HDEL', KEYS[1], 'w', 'wn', 'wt', 'wr', 'x:w')
            elseif v > longest then
                longest = v
            end
        elseif string.sub(k, 1, 4) == 'x:r:' then
            if v <= now then
                local o = string.sub(k, 5)
                redis.call('HDEL', KEYS[1], k, 'r:' .. o, 'q:r:' .. o,
                    't:r:' .. o)
            elseif v > longest then
                longest = v
            end
        end
    end
    local dead = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT',
        0, 64)
    if #dead > 0 then
        redis.call('ZREM', KEYS[3], unpack(dead))
    end
    return longest
end

local function readers()
    local n = 0
    local f = redis.call('HKEYS', KEYS[1])
    for i = 1, #f do
        if string.sub(f[i], 1, 2) == 'r:' then
            n = n + 1
        end
    end
    return n
end

-- A new hold's token; tells the waiters its lease if it ends before the
-- time some of them may sleep until (ws).
local function mint()
    local token = us
    local f = redis.call('HMGET', KEYS[2], 't', 'ws')
    local last = tonumber(f[1] or '0')
    if token <= last then
        token = last + 1
    end
    local ts = string.format('%d', token)
    if f[2] and tonumber(f[2]) > now + lease then
        redis.pcall(ARGV[5], ARGV[6], '|' .. ARGV[2])
        redis.call('HSET', KEYS[2], 't', ts, 'ws', now + lease)
    else
        redis.call('HSET', KEYS[2], 't', ts)
    end
    redis.call('PEXPIRE', KEYS[2], lease + tonumber(ARGV[7]))
    return token, ts
end

-- The answer "not now, sleep at most `sleep` ms" to a caller that waits
-- (ARGV[4] not ""): ws moves to the time it may sleep until; a reader
-- flags that readers wait (rw), so that the release that lets them in
-- wakes them all (lib: rwlock_release). The fence outlives the lock's
-- holders (mint set its expiry); one made here lives for the retention.
local function not_now(sleep, waiting, reader)
    if ARGV[4] ~= '' then
        local ws = tonumber(redis.call('HGET', KEYS[2], 'ws') or '0')
        local set = {}
        if reader then
            set = {'rw', '1'}
        end
        if now + sleep > ws then
            set[#set + 1] = 'ws'
            set[#set + 1] = now + sleep
        end
        if #set > 0 then
            redis.call('HSET', KEYS[2], unpack(set))
        end
        if redis.call('PTTL', KEYS[2]) < 0 then
            redis.call('PEXPIRE', KEYS[2], ARGV[7])
        end
    end
    return {0, sleep, waiting}
end

-- The hash lives as long as its longest holder.
local function keep_alive(longest)
    if longest > now then
        redis.call('PEXPIRE', KEYS[1], longest - now)
    end
end

local function extend(field)
    local x = tonumber(redis.call('HGET', KEYS[1], field) or '0')
    if now + lease > x then
        x = now + lease
        redis.call('HSET', KEYS[1], field, x)
    end
    return x
end

local longest = purge()
local h = redis.call('HMGET', KEYS[1], 'w', 'wn', 'wt', 'wr')

if side == 'r' then
    local rf = 'r:' .. me
    local mine = redis.call('HMGET', KEYS[1], rf, 'q:r:' .. me, 't:r:' .. me)
    if mine[1] then
        if mine[2] == ARGV[3] then
            return {1, tonumber(mine[3]), tonumber(mine[1])}
        end
        local n = redis.call('HINCRBY', KEYS[1], rf, 1)
        redis.call('HSET', KEYS[1], 'q:r:' .. me, ARGV[3])
        local x = extend('x:r:' .. me)
        if x > longest then longest = x end
        keep_alive(longest)
        return {1, tonumber(mine[3]), n}
    end
    -- A writer other than the caller excludes readers; a waiting writer
    -- does too when writers go first (the caller's own write hold does
    -- not: that is the downgrade).
    if h[1] and h[1] ~= me then
        local xw = tonumber(redis.call('HGET', KEYS[1], 'x:w') or now)
        return not_now(math.max(xw - now, 1), 0, true)
    end
    if h[1] ~= me and ARGV[9] == '1' and redis.call('ZCARD', KEYS[3]) > 0 then
        local first = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
        return not_now(math.max(tonumber(first[2]) - now, 1), 0, true)
    end
    local token, ts = mint()
    redis.call('HSET', KEYS[1], rf, 1, 'q:r:' .. me, ARGV[3], 'x:r:' .. me,
        now + lease, 't:r:' .. me, ts)
    if now + lease > longest then longest = now + lease end
    keep_alive(longest)
    return {1, token, 1}
end

-- The write side.
if h[1] == me then
    if h[4] == ARGV[3] then
        return {1, tonumber(h[3]), tonumber(h[2])}
    end
    local n = redis.call('HINCRBY', KEYS[1], 'wn', 1)
    redis.call('HSET', KEYS[1], 'wr', ARGV[3])
    local x = extend('x:w')
    if x > longest then longest = x end
    keep_alive(longest)
    return {1, tonumber(h[3]), n}
end
if redis.call('HEXISTS', KEYS[1], 'r:' .. me) == 1 then
    return {-1}
end
if h[1] or readers() > 0 then
    local waiting = 0
    if ARGV[4] ~= '' then
        redis.call('ZADD', KEYS[3], now + tonumber(ARGV[4]), me)
        -- The set lives as long as its youngest entry (see rwlock_touch).
        keep_ttl(KEYS[3], tonumber(ARGV[4]))
        waiting = 1
    end
    return not_now(math.max(longest - now, 1), waiting, false)
end
redis.call('ZREM', KEYS[3], me)
local token, ts = mint()
redis.call('HSET', KEYS[1], 'w', me, 'wn', 1, 'wt', ts, 'wr', ARGV[3], 'x:w',
    now + lease)
if now + lease > longest then longest = now + lease end
keep_alive(longest)
return {1, token, 1}
