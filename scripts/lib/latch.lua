-- lib/latch: how the latch scripts that write (latch_set,
-- latch_count_down) read the latch, pulled into them after lib/clock and
-- lib/applied when they are embedded. Not a script of its own.

-- Returns the server time (ms), the fields of the latch's hash `key` {c,
-- x, dn, dp, g, gs, d:<id>} (count, expiry, the applied set's counters,
-- and request id's record) and whether the latch is live: set and not
-- expired.
local function latch_read(key, id)
    local now = clock_now()
    local h = redis.call('HMGET', key, 'c', 'x', 'dn', 'dp', 'g', 'gs',
        'd:' .. id)
    return now, h, h[1] and tonumber(h[2] or '0') > now
end
