-- lib/waiters: the waiter registry of a plain lock, kept in the lock's own
-- hash (one key per lock: no script ever spans two keys, so a lock stays
-- usable while its slot migrates). Pulled into the plain lock's scripts
-- (after lib/clock) when they are embedded; not a script of its own.
--
-- Fields:  s:<seq>    "<lapse>:<wake>:<owner>": a registration, numbered
--                     in the order they were made; lapse: when it ends,
--                     wake: by when its waiter tries again of its own
--                     accord (its sleep's cap), both in server ms
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
-- registered again, acquired or left are skipped once each: the scans
-- of the front read 4 fields, then 64 at a time (the first is usually
-- live; the later reads amortise the holes).

-- True if registrations may be waiting between qh and qt (as read; a
-- lock that never had a waiter has no qt, and no number is read).
local function waiters_maybe(qh, qt)
    return qt and tonumber(qh or '1') <= tonumber(qt)
end

-- Registers `owner` at the back until now + life. sleep: the ms its try
-- answers it may sleep (a lease, or -1 for none); its waiter tries again
-- within min(sleep, life) even if no message comes (src/lock/acquire.c
-- wait_for_release), which waiter_recap relies on. qt: the hash's qt,
-- old: the owner's current seq (q:<owner>), both as read by the caller.
local function waiter_add(key, owner, life, now, sleep, qt, old)
    local k = tonumber(qt or '0') + 1
    if old then
        redis.call('HDEL', key, 's:' .. old)
    end
    if sleep < 0 or sleep > life then
        sleep = life
    end
    redis.call('HSET', key, 's:' .. k,
        string.format('%d:%d:', now + life, now + sleep) .. owner,
        'q:' .. owner, k, 'qt', k)
end

-- The parts of a registration's value: lapse, wake (numbers), owner. A
-- value "<lapse>:<owner>", as registrations were written before they
-- kept a wake (a waiter of an older rdl, within its lifetime), reads as
-- waking at its lapse: its first waiter is told every new lease, as then.
local function waiter_parse(v)
    local lapse, wake, owner = string.match(v, '^(%d+):(%d+):(.*)$')
    if not lapse then
        lapse, owner = string.match(v, '^(%d+):(.*)$')
        wake = lapse
    end
    return tonumber(lapse), tonumber(wake), owner
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

-- The first live registration from the front (qh), dropping lapsed ones
-- and passing holes on the way: its owner, wake and seq; or nil, nil and
-- last + 1. Reads 4 fields first (the usual front), then 64 at a time.
local function waiter_front(key, qh, qt, now)
    local h, last, n = tonumber(qh or '1'), tonumber(qt or '0'), 4
    while h <= last do
        local f, v, to = waiters_read(key, h, last, n)
        local drop = {}
        for i = 1, #v do
            if v[i] then
                local lapse, wake, owner = waiter_parse(v[i])
                if lapse > now then
                    if #drop > 0 then
                        redis.call('HDEL', key, unpack(drop))
                    end
                    return owner, wake, h + i - 1
                end
                drop[#drop + 1] = f[i]
                drop[#drop + 1] = 'q:' .. owner
            end
        end
        if #drop > 0 then
            redis.call('HDEL', key, unpack(drop))
        end
        h, n = to + 1, 64
    end
    return nil, nil, h
end

-- Takes the first live registration from the front (waiter_front).
-- Returns its owner (or nil) and the new qh, for the caller to write.
local function waiter_next(key, qh, qt)
    local owner, _, at = waiter_front(key, qh, qt, clock_now())
    if owner then
        waiter_remove(key, owner, at)
        return owner, at + 1
    end
    return nil, at
end

-- The number of live registrations (reads only).
local function waiters_count(key, qh, qt)
    local h, last, n = tonumber(qh or '1'), tonumber(qt or '0'), 0
    local now = clock_now()
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

-- A new hold was granted at `now` (server ms) while others wait. The
-- others are not woken by any release until they are first, and the
-- first must notice a holder whose lease runs out (Redis publishes
-- nothing then). Its sleep was capped at its own try: it tries again by
-- its wake at the latest. If that comes after the new lease ends, a
-- message "<owner>|<lease ms>" tells it to sleep no longer than the new
-- lease. If it comes first (the usual case: leases of one length, the new
-- one granted later), it is told nothing, and no client wakes: its try
-- then finds the new holder and sleeps no longer than that lease. (The
-- wake is not moved by a message: it stays a time by which the waiter
-- tries, only a later one than needed.)
-- Returns the front's seq (waiter_front), for a caller that stores qh.
local function waiter_recap(key, qh, qt, me, lease, now, pubcmd, channel)
    local first, wake, at = waiter_front(key, qh, qt, now)
    lease = tonumber(lease)
    if first and first ~= me and lease > 0 and wake > now + lease then
        waiter_say(pubcmd, channel, first, first .. '|' .. lease)
    end
    return at
end

-- A waiter left while the lock is held (no permit free). It may have been
-- the one a grant told when the holder's lease ends (waiter_recap): as
-- the first in line then, or since moved to the back by a last try. The
-- others sleep on the leases they saw at their own tries, which may end
-- later, so the first in line now is told `left` ms, when the lock may
-- come free (a holder's PTTL, a semaphore's earliest lease), unless its
-- wake comes sooner; at worst it is told twice. qh moves up to it, past
-- the holes that leaves make, so that many waiters leaving (a mass
-- cancel) do not each pass the same holes again.
local function waiter_pass_recap(key, qh, qt, left, now, pubcmd, channel)
    local at = waiter_recap(key, qh, qt, nil, left, now, pubcmd, channel)
    if at ~= tonumber(qh or '1') then
        redis.call('HSET', key, 'qh', at)
    end
end

-- Publishes the wake-up of `owner`.
local function waiter_wake(pubcmd, channel, owner)
    if owner then
        waiter_say(pubcmd, channel, owner, owner)
    end
end
