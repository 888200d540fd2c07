-- lib/waiters: the waiter registry of a plain lock, kept in the lock's own
-- hash (one key per lock: no script ever spans two keys, so a lock stays
-- usable while its slot migrates). Pulled into the plain lock's scripts
-- when they are embedded; not a script of its own.
--
-- Fields:  s:<seq>    "<lapse>:<owner>": a registration, numbered in the
--                     order they were made; lapse in server ms
--          q:<owner>  the seq of the owner's registration (present exactly
--                     when s:<seq> is)
--          qt         the last seq given;  qh  the first not yet examined
-- A try that finds the lock held registers its owner at the back (again,
-- if it was registered). A release that frees the lock takes the first
-- live registration from the front and names its owner in a message on
-- that owner's client's channel (waiter_say): one wake-up per hand-off,
-- across all clients, and no other client hears it. A registration lapses
-- by server time, so a waiter that died without leaving is woken at most
-- once, and only within one registration lifetime of its last try
-- (docs/design-notes.md "Targeted wake-ups"). Holes left by owners that
-- registered again, acquired or left are skipped once each.

-- True if registrations may be waiting between qh and qt (as read; a
-- lock that never had a waiter has no qt, and no number is read).
local function waiters_maybe(qh, qt)
    return qt and tonumber(qh or '1') <= tonumber(qt)
end

-- Registers `owner` at the back until now + life. qt: the hash's qt, old:
-- the owner's current seq (q:<owner>), both as read by the caller.
local function waiter_add(key, owner, life, now, qt, old)
    local k = tonumber(qt or '0') + 1
    if old then
        redis.call('HDEL', key, 's:' .. old)
    end
    redis.call('HSET', key, 's:' .. k,
        string.format('%d', now + life) .. ':' .. owner, 'q:' .. owner, k,
        'qt', k)
end

-- Takes the owner's registration out (seq as read from q:<owner>).
local function waiter_remove(key, owner, seq)
    redis.call('HDEL', key, 's:' .. seq, 'q:' .. owner)
end

-- Reads the registrations h..min(h + n - 1, last): their field names, the
-- values (false where a hole is), and the last seq read.
local function waiters_read(key, h, last, n)
    local to = math.min(h + n - 1, last)
    local f = {}
    for k = h, to do
        f[#f + 1] = 's:' .. k
    end
    return f, redis.call('HMGET', key, unpack(f)), to
end

-- Server time in ms.
local function waiters_now()
    local t = redis.call('TIME')
    return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Takes the first live registration from the front, dropping lapsed ones
-- on the way. Returns its owner (or nil) and the new qh, for the caller to
-- write.
local function waiter_next(key, qh, qt)
    local h, last = tonumber(qh or '1'), tonumber(qt or '0')
    local now = waiters_now()
    while h <= last do
        local f, v, to = waiters_read(key, h, last, 64)
        local drop = {}
        for i = 1, #v do
            if v[i] then
                local c = string.find(v[i], ':', 1, true)
                local owner = string.sub(v[i], c + 1)
                drop[#drop + 1] = f[i]
                drop[#drop + 1] = 'q:' .. owner
                if tonumber(string.sub(v[i], 1, c - 1)) > now then
                    redis.call('HDEL', key, unpack(drop))
                    return owner, h + i
                end
            end
        end
        if #drop > 0 then
            redis.call('HDEL', key, unpack(drop))
        end
        h = to + 1
    end
    return nil, h
end

-- The number of live registrations (reads only).
local function waiters_count(key, qh, qt)
    local h, last, n = tonumber(qh or '1'), tonumber(qt or '0'), 0
    local now = waiters_now()
    while h <= last do
        local _, v, to = waiters_read(key, h, last, 512)
        for i = 1, #v do
            if v[i] and tonumber(string.match(v[i], '^(%d+):')) > now then
                n = n + 1
            end
        end
        h = to + 1
    end
    return n
end

-- The owner of the first live registration, left in place (or nil).
local function waiter_first(key, qh, qt)
    local h, last = tonumber(qh or '1'), tonumber(qt or '0')
    local now = waiters_now()
    while h <= last do
        local _, v, to = waiters_read(key, h, last, 64)
        for i = 1, #v do
            if v[i] then
                local c = string.find(v[i], ':', 1, true)
                if tonumber(string.sub(v[i], 1, c - 1)) > now then
                    return string.sub(v[i], c + 1)
                end
            end
        end
        h = to + 1
    end
    return nil
end

-- Publishes `msg` for `owner` on the channel of its client: the lock's
-- channel, ':' and the owner string up to its first ':' (the client id;
-- the client builds the same name, rdl__client_channel in
-- src/core/keys.c), so that only the client that waits hears it, not
-- every client with a waiter on the lock. pcall: a client without access
-- to the channel (ACL) still frees the lock; the waiter then wakes by its
-- capped sleep.
local function waiter_say(pubcmd, channel, owner, msg)
    redis.pcall(pubcmd, channel .. ':' .. string.match(owner, '^[^:]*'), msg)
end

-- A new hold was granted while others wait: tells the first of them, by
-- a message "<owner>|<lease ms>", to sleep no longer than the new lease.
-- The others are not woken by any release until they are first, and the
-- first must notice a holder whose lease runs out (Redis publishes
-- nothing then): its sleep was capped by the lease it saw at its own try,
-- which may be longer than the new holder's.
local function waiter_recap(key, qh, qt, me, lease, pubcmd, channel)
    local first = waiter_first(key, qh, qt)
    if first and first ~= me then
        waiter_say(pubcmd, channel, first, first .. '|' .. lease)
    end
end

-- Publishes the wake-up of `owner`.
local function waiter_wake(pubcmd, channel, owner)
    if owner then
        waiter_say(pubcmd, channel, owner, owner)
    end
end
