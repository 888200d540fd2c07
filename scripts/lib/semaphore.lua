-- lib/sem: the semaphore's holders, pulled into the sem_* scripts (after
-- lib/waiters) when they are embedded. Not a script of its own. Its
-- functions take the keys as parameters, the scripts' KEYS[1] and KEYS[2]
-- (a library reads no KEYS: cmake/EmbedScripts.cmake):
--
-- hash     P = the total in force, u = permits in use (by listed
--          holders), t = last token issued; per holder c:<owner> = its
--          permits, k:<owner> = the token of its latest acquisition,
--          r:<owner> = its last request id; the waiter registry
--          (lib/waiters) and the applied set (lib/applied)
-- zset     sorted set: holder -> lease expiry (server ms). A holder's
--          permits share one expiry; it is listed here exactly while it
--          has c:<owner> in the hash.
-- Both keys live at least the longest lease plus the retention (at most
-- twice that), so the total and the last token outlive the holders, and
-- neither key outlives the other's purpose: the sorted set lives as long
-- as the hash counts its holders.
--@include hash

-- Drops the holders whose lease ended, fixing the permits in use (u).
-- Returns how many permits that freed. One read when nobody expired;
-- O(log n) per holder dropped.
local function semaphore_purge(hash, zset, now)
    local dead = redis.call('ZRANGEBYSCORE', zset, '-inf', now)
    if #dead == 0 then
        return 0
    end
    local freed, del = 0, {}
    for i = 1, #dead do
        local o = dead[i]
        freed = freed + tonumber(redis.call('HGET', hash, 'c:' .. o) or '0')
        del[#del + 1] = 'c:' .. o
        del[#del + 1] = 'k:' .. o
        del[#del + 1] = 'r:' .. o
    end
    for i = 1, #dead, 1000 do
        redis.call('ZREM', zset, unpack(dead, i, math.min(i + 999, #dead)))
    end
    hdel_all(hash, del, 3000)
    local used = tonumber(redis.call('HGET', hash, 'u') or '0')
    redis.call('HSET', hash, 'u', math.max(used - freed, 0))
    return freed
end

-- Milliseconds until the earliest holder's lease ends (at least 1), or
-- -1 if nobody holds.
local function semaphore_first_expiry(zset, now)
    local first = redis.call('ZRANGE', zset, 0, 0, 'WITHSCORES')
    if #first == 0 then
        return -1
    end
    return math.max(tonumber(first[2]) - now, 1)
end

-- Wakes up to n registered waiters (one message each, naming it), taking
-- them from the front of the registry of `hash` (qh, qt: as read by the
-- caller).
local function semaphore_wake(hash, n, qh, qt, pubcmd, channel)
    if n <= 0 or not waiters_maybe(qh, qt) then
        return
    end
    local head, woken = qh, {}
    for _ = 1, n do
        local o
        o, head = waiter_next(hash, head, qt)
        if not o then
            break
        end
        woken[#woken + 1] = o
    end
    redis.call('HSET', hash, 'qh', head)
    for i = 1, #woken do
        waiter_wake(pubcmd, channel, woken[i])
    end
end
