-- lib/clock: the server time and key lifetimes, pulled into every script
-- that reads the time or keeps a key alive (before the other libraries:
-- they call it) when the scripts are embedded. Not a script of its own.
--
-- The time is read once per script run, at its first use: a script runs
-- at one instant as far as the keys are concerned (Redis does not expire
-- keys while it runs), and a script that needs no time reads none. In the
-- batch script the calls of a batch share that one read
-- (docs/design-notes.md "Batched script calls"): tokens are still
-- max(last + 1, that time), each of them a time before its grant.

--@shared: one TIME for all the calls of a batch (docs/design-notes.md)
local clock_s, clock_u

-- The server time: in ms, and in us.
local function clock_now()
    if not clock_s then
        local t = redis.call('TIME')
        clock_s, clock_u = tonumber(t[1]), tonumber(t[2])
    end
    return clock_s * 1000 + math.floor(clock_u / 1000),
        clock_s * 1000000 + clock_u
end

-- `key` lives at least `least` ms more: if its PTTL is shorter, it is
-- set to `ms` (least when nil). A lease is never shortened, and a key that
-- a stream of calls keeps alive has its PTTL read, rarely written.
local function keep_ttl(key, least, ms)
    if redis.call('PTTL', key) < least then
        redis.call('PEXPIRE', key, ms or least)
    end
end

-- A hold's `key`, which has a TTL, lives at least `ms` more: keep_ttl
-- without the read where the server takes PEXPIRE ... GT (Redis 7.0 and
-- later, Valkey; redis.REDIS_VERSION_NUM came with them). Only for a key
-- that has a TTL: GT treats a key without one as never expiring.
local function keep_lease(key, ms)
    if (redis.REDIS_VERSION_NUM or 0) >= 0x070000 then
        redis.call('PEXPIRE', key, ms, 'GT')
    else
        keep_ttl(key, ms)
    end
end
