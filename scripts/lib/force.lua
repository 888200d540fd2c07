-- lib/force: a force release applied once, pulled into the force-release
-- scripts (after lib/applied) when the scripts are embedded. Not a script
-- of its own.
--
-- A retry of a force release (its reply was lost) must not free a hold
-- that the next owner took meanwhile: each force request is recorded in
-- the applied set with its answer, and a retry gets that answer again.

-- The first answer of force request `id` (1 freed, 0 was free), or nil.
local function force_replay(fence, id)
    if redis.call('HEXISTS', fence, 'd:' .. id .. ':1') == 1 then
        return 1
    end
    if redis.call('HEXISTS', fence, 'd:' .. id .. ':0') == 1 then
        return 0
    end
    return nil
end

-- Records answer r of force request `id` and returns it. A fence that did
-- not exist (a name never held) lives for the window.
local function force_done(fence, id, r, now, window)
    applied(fence, 'd:' .. id .. ':' .. r, now, window)
    if redis.call('PTTL', fence) < 0 then
        redis.call('PEXPIRE', fence, window)
    end
    return r
end
