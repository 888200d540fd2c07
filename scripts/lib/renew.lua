-- lib/renew: the watchdog's batched renewals (the *_renew and *_touch
-- scripts), pulled into them when the scripts are embedded. Not a script
-- of its own.

-- The reply to n renewals: {r1, ..., rn}, ri 1 if one(i) renewed the i-th
-- hold or queue entry, 0 if one(i) found it gone and changed nothing
-- (returned false).
local function renew_all(n, one)
    local out = {}
    for i = 1, n do
        out[i] = one(i) and 1 or 0
    end
    return out
end
