-- lib/release: what every release script decides before it changes
-- anything (the same for every kind: docs/design-notes.md "Request
-- ids"), pulled into them after lib/applied when the scripts are
-- embedded. Not a script of its own.

-- The answer of the release of one level for request `id`, if the release
-- ends before it changes anything, else nil. held: the owner holds levels
-- (count of them, the last request applied to them `last`); record: the
-- owner's record in the applied set, read for when it holds none; undo:
-- "" for a release, or the acquire request whose level alone it releases.
--   not held            {1, 0} if `id` itself freed the hold (a retry),
--                       else {0}
--   last is `id`        a retry of a release applied: {1, count}
--   last is not undo    {0}: that acquisition's level is not the last one
local function release_check(held, count, last, record, id, undo)
    if not held then
        if applied_is(record, id) then
            return {1, 0}
        end
        return {0}
    end
    if last == id then
        return {1, tonumber(count)}
    end
    if undo ~= '' and last ~= undo then
        return {0}
    end
    return nil
end

-- release_check, then the release of a level that is not the last, in
-- place: the count, field fn of `key`, goes down by one, and the request
-- is recorded in field fr. Returns the answer, or nil when the last level
-- is to go (the caller frees the hold).
local function release_level(key, held, count, last, record, id, undo, fn,
                             fr)
    local r = release_check(held, count, last, record, id, undo)
    if r then
        return r
    end
    local n = tonumber(count) - 1
    if n > 0 then
        redis.call('HSET', key, fn, n, fr, id)
        return {1, n}
    end
    return nil
end
