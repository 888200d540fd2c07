-- lib/force: a force release applied once, pulled into the force-release
-- scripts (after lib/clock and lib/applied) when the scripts are
-- embedded. Not a script of its own.
--
-- A retry of a force release (its reply was lost) must not free a hold
-- that the next owner took meanwhile: each force request is recorded in
-- the applied set with its answer, and a retry gets that answer again.

-- The first answer of force request `id` (1 freed, 0 was free), or nil.
local function force_replay(key, id)
    local r = redis.call('HMGET', key, 'd:' .. id .. ':1', 'd:' .. id .. ':0')
    if r[1] then
        return 1
    end
    if r[2] then
        return 0
    end
    return nil
end

-- Records answer r of force request `id` and returns it. The record lives
-- for the window at least, also in a hash that did not exist (a name never
-- held) or that would expire sooner.
local function force_done(key, id, r, window)
    applied(key, 'd:' .. id .. ':' .. r, id, window)
    keep_ttl(key, window)
    return r
end
