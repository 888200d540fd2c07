-- lib/applied: the applied set of a lock, pulled into every script that
-- ends a hold when the scripts are embedded. Not a script of its own.
--
-- The applied set (docs/design-notes.md "Request ids"): fields "d:<id>" of
-- the fence hash, valued with the server time (ms) the request was applied.
-- Records older than the window are pruned whenever their number doubled
-- since the last prune ("dn" counts them, "dp" is the count after that
-- prune): amortised O(1) per record, at most twice one window's records.
local function applied(fence, field, now, window)
    redis.call('HSET', fence, field, now)
    local n = redis.call('HINCRBY', fence, 'dn', 1)
    if n < 2 * tonumber(redis.call('HGET', fence, 'dp') or '32') then
        return
    end
    local f = redis.call('HGETALL', fence)
    n = 0
    for i = 1, #f, 2 do
        if string.sub(f[i], 1, 2) == 'd:' then
            if tonumber(f[i + 1]) <= now - window then
                redis.call('HDEL', fence, f[i])
            else
                n = n + 1
            end
        end
    end
    redis.call('HSET', fence, 'dn', n, 'dp', math.max(n, 32))
end
