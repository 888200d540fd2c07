-- lib/fairq: the fair lock's hold and queue, kept in the lock's one hash,
-- pulled into the fair lock's scripts (after lib/waiters) when they are
-- embedded. Not a script of its own.
--
-- Fields:  o, n, t, r  owner ("" or absent: free), count (0: granted by a
--                      hand-off, not yet confirmed by the owner's try),
--                      token (while free, the last issued), last request
--          e           the hold's end, server ms (a grant: the owner's
--                      entry lapse); a hold whose e has passed is free
--          x           server ms at which the key expires, as last set
--          s:<seq>     "<lapse>:<owner>": a queue entry, numbered by
--                      arrival at Redis; lapse in server ms, pushed back by
--                      fair_touch while its waiter lives
--          q:<owner>   the seq of the owner's entry (present exactly when
--                      s:<seq> is)
--          qt          the last seq given;  qh  no entry before it
--          qn          entries in qh..qt, live or lapsed
--          d:..., dn, dp, g, gs  the applied set (lib/applied)
-- An entry keeps its seq while it is renewed, so a waiter keeps its place
-- through any number of tries. A lapsed entry (its waiter died) is dropped
-- when a scan of the front meets it: only the front matters.
--
-- Who watches whom: the first live entry watches e (its waiter's sleep is
-- capped by it), the second watches the first's lapse, the others wait to
-- be told. Whoever changes the first or the second tells them their new
-- deadline by a message "<owner>|<ms>" (fairq_tell), which re-arms a
-- sleeper's timer without a try (RDL__WAKE_RECAP).

-- The next token: the last + 1, at least the server time in us (see
-- docs/design-notes.md "Fencing tokens"), as a string.
local function fair_token(t, us)
    return string.format('%d', math.max(tonumber(t or '0') + 1, us))
end

-- Makes the key outlive `until_ms` by at least half of `keep`, reading no
-- PTTL: x says when the key expires. Returns nil if it lives long enough,
-- else the PTTL to set (fair_hset), and puts the new x in the caller's
-- HSET. So the key is refreshed about once per keep / 2, not per call.
local function fair_keep(x, until_ms, now, keep, set)
    if tonumber(x or '0') < until_ms + keep / 2 then
        set[#set + 1] = 'x'
        set[#set + 1] = string.format('%d', until_ms + keep)
        return until_ms + keep - now
    end
    return nil
end

-- Writes `set` to the hash, then sets its PTTL if fair_keep asked to (after
-- the write: the HSET may create the key).
local function fair_hset(key, set, pttl)
    redis.call('HSET', key, unpack(set))
    if pttl then
        redis.call('PEXPIRE', key, pttl)
    end
end

-- Reads the first `want` live entries from qh on: {seq, owner, lapse,
-- moved} each (moved: a lapsed entry stood before it). Returns them, the
-- fields of the lapsed entries met before the last of them (for the caller
-- to delete, or not), and the seq after the last slot read.
local function fairq_front(key, qh, qt, now, want)
    local h, last, n = tonumber(qh or '1'), tonumber(qt or '0'), 4
    local live, drop = {}, {}
    while h <= last do
        local f, v, to = waiters_read(key, h, last, n)
        for i = 1, #v do
            if v[i] then
                local c = string.find(v[i], ':', 1, true)
                local ent = {seq = h + i - 1, owner = string.sub(v[i], c + 1),
                    lapse = tonumber(string.sub(v[i], 1, c - 1)),
                    moved = #drop > 0}
                if ent.lapse > now then
                    live[#live + 1] = ent
                    if #live == want then
                        return live, drop, ent.seq + 1
                    end
                else
                    drop[#drop + 1] = f[i]
                    drop[#drop + 1] = 'q:' .. ent.owner
                end
            end
        end
        h, n = to + 1, 64
    end
    return live, drop, h
end

-- Takes live[k] (none if k is 0) and the lapsed entries in `drop` out of
-- the queue, and moves qh to the first entry left, past the holes that
-- leaves made, so no scan meets them twice; qh and qn go into the
-- caller's HSET.
local function fairq_pop(key, live, drop, rest, k, qn, set)
    if k > 0 then
        drop[#drop + 1] = 's:' .. live[k].seq
        drop[#drop + 1] = 'q:' .. live[k].owner
    end
    if #drop > 0 then
        redis.call('HDEL', key, unpack(drop))
    end
    local qh = rest
    if live[1] and k ~= 1 then
        qh = live[1].seq
    elseif live[2] then
        qh = live[2].seq
    end
    set[#set + 1] = 'qh'
    set[#set + 1] = qh
    set[#set + 1] = 'qn'
    set[#set + 1] = qn - #drop / 2
end

-- Hands the lock to the head (live[1], popped by the caller): a grant
-- that lasts as long as the head's entry would have, so a dead head keeps
-- it no longer than its queue lease. The head's next try confirms it
-- (fair_acquire). Returns the grant's end.
local function fairq_grant(head, t, us, set)
    local n = #set
    set[n + 1], set[n + 2], set[n + 3], set[n + 4] = 'o', head.owner, 'n', 0
    set[n + 5], set[n + 6], set[n + 7] = 'r', '', 't'
    set[n + 8], set[n + 9] = fair_token(t, us), 'e'
    set[n + 10] = string.format('%d', head.lapse)
    return head.lapse
end

-- After the head (live[1]) left the front (granted, took the lock, or
-- left), tells the new first its deadline, the lock's end e, unless it
-- already watched a later one (it was second, watching the head's lapse,
-- which is not before e); and tells the new second to watch the new
-- first's lapse. `me` (the caller) learns its duty from its reply.
-- Each message goes to its waiter's client only (lib/waiters, waiter_say).
local function fairq_tell(live, e, now, me, pubcmd, channel)
    local f, s = live[2], live[3]
    if f and f.owner ~= me and (f.moved or e < live[1].lapse) then
        waiter_say(pubcmd, channel, f.owner,
            f.owner .. '|' .. math.max(e - now, 1))
    end
    if s and s.owner ~= me then
        waiter_say(pubcmd, channel, s.owner,
            s.owner .. '|' .. math.max(f.lapse - now, 1))
    end
end

-- A free lock and a queue (h: o, n, t, r, e, qh, qt, qn as read): the
-- first live entry is granted the lock and named in a message. Returns the
-- new e (0 if nobody was waiting) and the new qn.
local function fairq_handoff(key, h, now, us, set, me, pubcmd, channel)
    local qn = tonumber(h[8] or '0')
    if qn == 0 then
        return 0, 0
    end
    local live, drop, rest = fairq_front(key, h[6], h[7], now, 3)
    if not live[1] then
        fairq_pop(key, live, drop, rest, 0, qn, set)
        return 0, 0
    end
    fairq_pop(key, live, drop, rest, 1, qn, set)
    local e = fairq_grant(live[1], h[3], us, set)
    waiter_wake(pubcmd, channel, live[1].owner)
    fairq_tell(live, e, now, me, pubcmd, channel)
    return e, qn - #drop / 2 -- drop now holds the head's fields too
end
