-- lib/rwlock: the read-write lock's hold hash (rwlock_acquire says what it
-- holds), pulled into rwlock_acquire and rwlock_release when they are
-- embedded. Not a script of its own.

-- Appends to `list` (a new one if nil) the four fields of reader owner's
-- share of the hold, in this order: r:<owner> its count, q:r:<owner> its
-- last request id, x:r:<owner> its expiry, t:r:<owner> its token; returns
-- the list.
local function rw_reader_fields(owner, list)
    list = list or {}
    list[#list + 1] = 'r:' .. owner
    list[#list + 1] = 'q:r:' .. owner
    list[#list + 1] = 'x:r:' .. owner
    list[#list + 1] = 't:r:' .. owner
    return list
end
