-- lib/applied: the applied set of a lock, pulled into every script that
-- ends a hold when the scripts are embedded. Not a script of its own.
--
-- The applied set (docs/design-notes.md "Request ids"): fields "d:<id>" of
-- the fence hash, valued with the server time (ms) the request was applied.
-- Records older than the window are pruned whenever their number doubled
-- since the last prune ("dn" counts them, "dp" is the count after that
-- prune): amortised O(1) per record, at most twice one window's records.
--
-- token (optional): the token of the hold that ended; written back as the
-- fence's last token if it is larger (a hold the watchdog kept for longer
-- than the fence's retention may have outlived its fence key). One read
-- and one write of the fence when nothing is pruned.
local function applied(fence, field, now, window, token)
    local f = redis.call('HMGET', fence, 't', 'dn', 'dp')
    local n = tonumber(f[2] or '0') + 1
    local set = {field, now, 'dn', n}
    if token and tonumber(token) > tonumber(f[1] or '0') then
        set[#set + 1] = 't'
        set[#set + 1] = token
    end
    redis.call('HSET', fence, unpack(set))
    if n < 2 * tonumber(f[3] or '32') then
        return
    end
    local all = redis.call('HGETALL', fence)
    n = 0
    for i = 1, #all, 2 do
        if string.sub(all[i], 1, 2) == 'd:' then
            if tonumber(all[i + 1]) <= now - window then
                redis.call('HDEL', fence, all[i])
            else
                n = n + 1
            end
        end
    end
    redis.call('HSET', fence, 'dn', n, 'dp', math.max(n, 32))
end
