-- fair_acquire: one try to take, confirm, re-enter or queue for a fair
-- lock.
--
-- KEYS[1]  lock hash, the lock's only key (lib/fairq: hold, queue,
--          applied set); its PTTL outlives the hold and the queue
-- ARGV[1..7] the acquire contract, as in lock_acquire: owner, lease,
--          request id, "" (a one-shot try: not queued) or the queue lease
--          in ms (the caller is queued if it cannot have the lock now, its
--          entry living that long unless renewed), publish command,
--          channel of the lock, retention of the hash after the hold
--
-- Replies  {1, token, count}    acquired (count 1) or re-entered
--          {0, sleep, position} not acquired: sleep at most `sleep` ms
--                               (-1: no bound known) before trying again;
--                               position > 0 if the caller is queued (its
--                               place, counting entries that may have
--                               lapsed unseen), 0 if not
--
-- The lock goes to the head of the queue: a newcomer takes it only when
-- no live entry waits. A release hands the lock to the head in its own
-- script (a grant, count 0); the head's next try finds its owner there and
-- confirms it with its lease and request id, so a retry of the confirming
-- try answers as the first did. A free lock that a try finds with a live
-- head waiting (the holder's lease ran out) is handed to the head here in
-- the same way. Who watches whom: lib/fairq.
-- Hand-off: the head's confirm is 3 commands (HMGET, TIME, HSET), the
-- releaser's queueing try 3 (HMGET, TIME, HSET).
--@include clock
--@include waiters
--@include fairq
local me, lease, keep = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[7])
local h = redis.call('HMGET', KEYS[1], 'o', 'n', 't', 'r', 'e', 'qh', 'qt',
    'qn', 'x', 'q:' .. me)
if h[1] == me and h[4] == ARGV[3] then
    return {1, tonumber(h[3]), tonumber(h[2])}
end
local now, us = clock_now()
local e = tonumber(h[5] or '0')

-- Confirms a grant (count 0) or re-enters. Re-entering never shortens the
-- hold. A confirm sets the lease the caller asked for; if that ends before
-- the grant would have, the first waiter, which watched the grant's end,
-- is told the sooner one.
local function mine()
    local n = tonumber(h[2]) + 1
    local until_ms = now + lease
    if n > 1 then
        until_ms = math.max(e, until_ms)
    end
    local set = {'n', n, 'r', ARGV[3], 'e', string.format('%d', until_ms)}
    fair_hset(KEYS[1], set, fair_keep(h[9], until_ms, now, keep, set))
    if until_ms < e then
        local first = fairq_front(KEYS[1], h[6], h[7], now, 1)[1]
        if first then
            waiter_say(ARGV[5], ARGV[6], first.owner,
                first.owner .. '|' .. lease)
        end
    end
    return {1, tonumber(h[3]), n}
end

if h[1] == me and e > now then
    return mine()
end

local set, qn, pttl = {}, tonumber(h[8] or '0'), nil

-- The lock is free and the caller is first (or nobody waits): it takes
-- the lock, and leaves the queue if it was in it.
local function take(live, drop, rest)
    if qn > 0 then
        fairq_pop(KEYS[1], live, drop, rest, live[1] and 1 or 0, qn, set)
    end
    local token = fair_token(h[3], us)
    local n = #set
    set[n + 1], set[n + 2], set[n + 3], set[n + 4] = 'o', me, 'n', 1
    set[n + 5], set[n + 6], set[n + 7], set[n + 8] = 't', token, 'r', ARGV[3]
    set[n + 9], set[n + 10] = 'e', string.format('%d', now + lease)
    fair_hset(KEYS[1], set, fair_keep(h[9], now + lease, now, keep, set))
    if live[1] then
        fairq_tell(live, now + lease, now, me, ARGV[5], ARGV[6])
    end
    return {1, tonumber(token), 1}
end

-- The caller's duty while it waits (see lib/fairq): its sleep bound.
local function duty(rank, live)
    if rank == 1 then
        return e - now
    end
    if rank == 2 and live[1] then
        return math.min(e, live[1].lapse) - now
    end
    return -1
end

-- Queues the caller at the back, or keeps its place if its entry lives.
-- Returns its place (an upper bound past the second) and its sleep.
local function queue(live)
    if h[10] then
        for i = 1, #live do
            if live[i].owner == me then
                return i, duty(i, live)
            end
        end
        local v = redis.call('HGET', KEYS[1], 's:' .. h[10])
        if v and tonumber(string.match(v, '^(%d+):')) > now then
            return qn, -1
        end
        -- Lapsed: not brought back, but queued again at the back (the scan
        -- above may have dropped it already).
        if v then
            redis.call('HDEL', KEYS[1], 's:' .. h[10])
            qn = qn - 1
        end
    end
    local k = tonumber(h[7] or '0') + 1
    local lapse = now + tonumber(ARGV[4])
    local n = #set
    set[n + 1] = 's:' .. k
    set[n + 2] = string.format('%d', lapse) .. ':' .. me
    set[n + 3], set[n + 4], set[n + 5], set[n + 6] = 'q:' .. me, k, 'qt', k
    set[n + 7], set[n + 8] = 'qn', qn + 1
    pttl = fair_keep(h[9], math.max(lapse, e), now, keep, set)
    if qn == 1 and not live[1] then
        live = fairq_front(KEYS[1], h[6], h[7], now, 1)
        if not live[1] then
            return 1, duty(1, live)
        end
    end
    return qn + 1, duty(qn + 1, live)
end

local held = h[1] and h[1] ~= '' and e > now
local live, drop, rest = {}, {}, nil
if qn > 0 and (not held or h[10]) then
    live, drop, rest = fairq_front(KEYS[1], h[6], h[7], now, 3)
end
if not held then
    if not live[1] or live[1].owner == me then
        return take(live, drop, rest)
    end
    fairq_pop(KEYS[1], live, drop, rest, 1, qn, set)
    e = fairq_grant(live[1], h[3], us, set)
    qn = qn - #drop / 2 -- drop now holds the head's fields too
    waiter_wake(ARGV[5], ARGV[6], live[1].owner)
    fairq_tell(live, e, now, me, ARGV[5], ARGV[6])
    table.remove(live, 1)
end
local pos, sleep = 0, e - now
if ARGV[4] ~= '' then
    pos, sleep = queue(live)
end
if #set > 0 then
    fair_hset(KEYS[1], set, pttl)
end
return {0, sleep, pos}
