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
-- its own lease, not with the longest one. Expired holders are purged
-- first (one HGETALL, O(holders)); lapsed waiting writers when a writer
-- joins the wait.
--
-- Uncontended: TIME, HGETALL, the fence's HMGET, HSET and PEXPIRE, the
-- hold's HSET and PEXPIRE, and a ZREM of the caller's wait for a writer or,
-- when writers go first, a ZRANGEBYSCORE for a live waiting writer for a
-- reader (8 commands); a re-entry TIME, HGETALL, HSET, PEXPIRE.
--
-- A waiter sleeps at most until the time its answer gave (then tries
-- again: Redis publishes nothing when a lease runs out). A new hold whose
-- lease ends before the latest such time (ws) tells every waiter with the
-- message "|<lease ms>" to sleep no longer than that lease, else a writer
-- handed the lock that then dies would leave the others asleep on an
-- earlier holder's longer lease. With leases of one length no message
-- goes.
--@include clock
--@include hash
--@include rwlock
local now, us = clock_now()
local me, side, lease = ARGV[1], ARGV[8], tonumber(ARGV[2])

-- The hold's fields, read once: expired holders are purged (one HDEL per
-- 1000 fields) and left out of h. Returns h, the longest expiry left (0 if
-- none) and the number of readers left.
local function load()
    local f = redis.call('HGETALL', KEYS[1])
    local h, dead, longest, readers = {}, {}, 0, 0
    for i = 1, #f, 2 do
        h[f[i]] = f[i + 1]
    end
    local function drop(fields)
        for _, k in ipairs(fields) do
            dead[#dead + 1] = k
            h[k] = nil
        end
    end
    for i = 1, #f, 2 do
        local k = f[i]
        if k == 'x:w' or string.sub(k, 1, 4) == 'x:r:' then
            local v = tonumber(f[i + 1])
            if v > now then
                if v > longest then longest = v end
            elseif k == 'x:w' then
                drop({'w', 'wn', 'wt', 'wr', 'x:w'})
            else
                drop(rw_reader_fields(string.sub(k, 5)))
            end
        end
    end
    hdel_all(KEYS[1], dead)
    for i = 1, #f, 2 do
        if h[f[i]] and string.sub(f[i], 1, 2) == 'r:' then
            readers = readers + 1
        end
    end
    return h, longest, readers
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

local h, longest, readers = load()

-- A hold of the caller's written in one HSET: fields `set`, and its
-- expiry field xf moved to now + lease if that is later. The hash lives
-- as long as its longest holder.
local function hold(set, xf)
    local x = tonumber(h[xf] or '0')
    if now + lease > x then
        x = now + lease
        set[#set + 1] = xf
        set[#set + 1] = x
    end
    redis.call('HSET', KEYS[1], unpack(set))
    if x > longest then longest = x end
    redis.call('PEXPIRE', KEYS[1], longest - now)
end

if side == 'r' then
    local rf, xf = 'r:' .. me, 'x:r:' .. me
    if h[rf] then
        if h['q:r:' .. me] == ARGV[3] then
            return {1, tonumber(h['t:r:' .. me]), tonumber(h[rf])}
        end
        local n = tonumber(h[rf]) + 1
        hold({rf, n, 'q:r:' .. me, ARGV[3]}, xf)
        return {1, tonumber(h['t:r:' .. me]), n}
    end
    -- A writer other than the caller excludes readers; a waiting writer
    -- does too when writers go first (the caller's own write hold does
    -- not: that is the downgrade). Waiting writers whose entry lapsed
    -- do not count.
    if h.w and h.w ~= me then
        local xw = tonumber(h['x:w'] or now)
        return not_now(math.max(xw - now, 1), 0, true)
    end
    if h.w ~= me and ARGV[9] == '1' then
        local first = redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. now, '+inf',
            'WITHSCORES', 'LIMIT', 0, 1)
        if first[2] then
            return not_now(math.max(tonumber(first[2]) - now, 1), 0, true)
        end
    end
    local token, ts = mint()
    hold({rf, 1, 'q:r:' .. me, ARGV[3], 't:r:' .. me, ts}, xf)
    return {1, token, 1}
end

-- The write side.
if h.w == me then
    if h.wr == ARGV[3] then
        return {1, tonumber(h.wt), tonumber(h.wn)}
    end
    local n = tonumber(h.wn) + 1
    hold({'wn', n, 'wr', ARGV[3]}, 'x:w')
    return {1, tonumber(h.wt), n}
end
if h['r:' .. me] then
    return {-1}
end
if h.w or readers > 0 then
    local waiting = 0
    if ARGV[4] ~= '' then
        -- Entries of writers that stopped waiting without leaving lapse
        -- here.
        redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
        redis.call('ZADD', KEYS[3], now + tonumber(ARGV[4]), me)
        -- The set lives as long as its youngest entry (see rwlock_touch).
        keep_ttl(KEYS[3], tonumber(ARGV[4]))
        waiting = 1
    end
    return not_now(math.max(longest - now, 1), waiting, false)
end
redis.call('ZREM', KEYS[3], me)
local token, ts = mint()
hold({'w', me, 'wn', 1, 'wt', ts, 'wr', ARGV[3]}, 'x:w')
return {1, token, 1}
