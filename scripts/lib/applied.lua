-- lib/applied: the applied set of a lock, pulled into every script that
-- ends a hold, and into those that record every request (latch_set,
-- latch_count_down, semaphore_set), after lib/clock, when the scripts are
-- embedded. Not a script of its own.
--
-- The applied set (docs/design-notes.md "Request ids") is a set of fields
-- "d:<...>" of one hash (the plain lock's hash, the other kinds' fence),
-- each valued "<generation>|<request id>": the request, and the generation
-- in which it was applied (semaphore_set puts its answer between the two; only
-- the generation before the first "|" and the "|<request id>" at the end
-- are read here). The plain lock keeps one field per owner (the owner's
-- last final release: a retry comes before the owner's next request), so
-- its hash stays small; the other kinds one per request.
--   g   the current generation     gs  server time (ms) when g began
--   dn  records now                dp  records left by the last prune
-- Writing a record reads no clock. When dn has doubled since dp, a prune
-- drops the records of generations before g if g began more than a window
-- ago (each of them was applied before g began), and begins a new
-- generation: amortised O(1) per record, and the set holds at most the
-- records of about two windows.
--@include hash

-- Prunes the set in `key` (g and gs as read).
local function applied_prune(key, g, gs, window)
    local now = clock_now()
    local old = tonumber(gs or '0') <= now - window
    local all = redis.call('HGETALL', key)
    local n, dead = 0, {}
    for i = 1, #all, 2 do
        if string.sub(all[i], 1, 2) == 'd:' then
            if old and tonumber(string.match(all[i + 1], '^%d+')) < g then
                dead[#dead + 1] = all[i]
            else
                n = n + 1
            end
        end
    end
    hdel_all(key, dead)
    redis.call('HSET', key, 'dn', n, 'dp', math.max(n, 32), 'g', g + 1,
        'gs', now)
end

-- true if a record's value (or false) says request id was applied.
local function applied_is(value, id)
    return value and string.sub(value, -#id - 1) == '|' .. id or false
end

-- Records request id as `field` in the applied set of `key`. st: the
-- values of dn, dp, g and gs, as the caller read them (HMGET); set: other
-- field/value pairs the caller writes to `key`, sent in the same HSET;
-- new: the field did not exist (it counts towards the next prune).
local function applied_add(key, field, id, st, window, set, new)
    local n = tonumber(st[1] or '0')
    local g = tonumber(st[3] or '0')
    if new then
        n = n + 1
    end
    set[#set + 1] = field
    set[#set + 1] = (st[3] or '0') .. '|' .. id
    set[#set + 1] = 'dn'
    set[#set + 1] = n
    redis.call('HSET', key, unpack(set))
    if n >= 2 * tonumber(st[2] or '32') then
        applied_prune(key, g, st[4], window)
    end
end


-- Records request id as `field` in the applied set of `key` (a fence hash,
-- or a hash of the force-release records: one field per request).
local function applied(key, field, id, window)
    local f = redis.call('HMGET', key, 'dn', 'dp', 'g', 'gs')
    applied_add(key, field, id, f, window, {}, true)
end
