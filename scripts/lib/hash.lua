-- lib/hash: deleting many fields of a hash, pulled into the scripts that
-- drop fields by the hundred (lapsed readers of a read-write lock, expired
-- semaphore holders, pruned applied records) when they are embedded, and
-- included by lib/applied and lib/semaphore. Not a script of its own.

-- Deletes the fields of list `fields` from the hash `key`, `per` of them
-- (default 1000) per HDEL: Lua's unpack() takes at most about 8000 values
-- at once. No HDEL for an empty list.
local function hdel_all(key, fields, per)
    per = per or 1000
    for i = 1, #fields, per do
        redis.call('HDEL', key, unpack(fields, i, math.min(i + per - 1,
            #fields)))
    end
end
