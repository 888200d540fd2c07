-- lib/sem: the semaphore's holders, pulled into the sem_* scripts (after
-- lib/waiters) when they are embedded. Not a script of its own.
--
-- KEYS[1]  hash: P = the total in force, u = permits in use (by listed
--          holders), t = last token issued; per holder c:<owner> = its
--          permits, k:<owner> = the token of its latest acquisition,
--          r:<owner> = its last request id; the waiter registry
--          (lib/waiters) and the applied set (lib/applied)
-- KEYS[2]  sorted set: holder -> lease expiry (server ms). A holder's
--          permits share one expiry; it is listed here exactly while it
--          has c:<owner> in the hash.
-- Both keys live at least the longest lease plus the retention (at most
-- twice that), so the total and the last token outlive the holders, and
-- neither key outlives the other's purpose: the sorted set lives as long
-- as the hash counts its holders.

-- Server time: {ms, us}.
local function sem_now()
    local t = redis.call('TIME')
    local s, u = tonumber(t[1]), tonumber(t[2])
    return s * 1000 + math.floor(u / 1000), s * 1000000 + u
end

-- Drops the holders whose lease ended, fixing the permits in use (u).
-- Returns how many permits that freed. One read when nobody expired;
-- O(log n) per holder dropped.
local function sem_purge(now)
    local dead = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
    if #dead == 0 then
        return 0
    end
    local freed, del = 0, {}
    for i = 1, #dead do
        local o = dead[i]
        freed = freed + tonumber(redis.call('HGET', KEYS[1], 'c:' .. o) or '0')
        del[#del + 1] = 'c:' .. o
        del[#del + 1] = 'k:' .. o
        del[#del + 1] = 'r:' .. o
    end
    for i = 1, #dead, 1000 do
        redis.call('ZREM', KEYS[2], unpack(dead, i, math.min(i + 999, #dead)))
    end
    for i = 1, #del, 3000 do
        redis.call('HDEL', KEYS[1], unpack(del, i, math.min(i + 2999, #del)))
    end
    local used = tonumber(redis.call('HGET', KEYS[1], 'u') or '0')
    redis.call('HSET', KEYS[1], 'u', math.max(used - freed, 0))
    return freed
end

-- Milliseconds until the earliest holder's lease ends (at least 1), or
-- -1 if nobody holds.
local function sem_first_expiry(now)
    local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
    if #first == 0 then
        return -1
    end
    return math.max(tonumber(first[2]) - now, 1)
end

-- The first n keys (1: the hash; 2: both) live at least `least` ms more;
-- when they must be extended they get `ms`, so that a steady stream of
-- grants reads their TTLs and rarely writes them.
local function sem_keep(n, least, ms)
    for i = 1, n do
        if redis.call('PTTL', KEYS[i]) < least then
            redis.call('PEXPIRE', KEYS[i], ms)
        end
    end
end

-- Wakes up to n registered waiters (one message each, naming it), taking
-- them from the front of the registry (qh, qt: as read by the caller).
local function sem_wake(n, qh, qt, pubcmd, channel)
    if n <= 0 or not waiters_maybe(qh, qt) then
        return
    end
    local head, woken = qh, {}
    for _ = 1, n do
        local o
        o, head = waiter_next(KEYS[1], head, qt)
        if not o then
            break
        end
        woken[#woken + 1] = o
    end
    redis.call('HSET', KEYS[1], 'qh', head)
    for i = 1, #woken do
        waiter_wake(pubcmd, channel, woken[i])
    end
end
