-- lock_force_release: frees the lock whoever holds it.
--
-- KEYS[1]  hold   hash, as in lock_acquire
-- KEYS[2]  fence  hash, as in lock_acquire (its applied set)
-- ARGV[1]  publish command: "publish" or "spublish"
-- ARGV[2]  channel of the lock
-- ARGV[3]  request id; a retry sends the same id
-- ARGV[4]  how long the applied set remembers a request, in ms
--
-- Replies  1  the lock was held and is now free (waiters were woken)
--          0  the lock was free
--
--
-- A retry (the reply was lost) must not free a hold that the next owner
-- took meanwhile: the applied set (see lock_release) remembers each force
-- request with its answer, and a retry gets that answer again. The fence
-- is left alone otherwise: the next holder's token must still be larger
-- than the token of the hold that was removed.
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
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function done(r)
    applied(KEYS[2], 'd:' .. ARGV[3] .. ':' .. r, now, tonumber(ARGV[4]))
    if redis.call('PTTL', KEYS[2]) < 0 then
        redis.call('PEXPIRE', KEYS[2], ARGV[4])
    end
    return r
end
if redis.call('HEXISTS', KEYS[2], 'd:' .. ARGV[3] .. ':1') == 1 then
    return 1
end
if redis.call('HEXISTS', KEYS[2], 'd:' .. ARGV[3] .. ':0') == 1 then
    return 0
end
if redis.call('DEL', KEYS[1]) == 0 then
    return done(0)
end
-- pcall: as in lock_release, a missing channel permission frees anyway.
redis.pcall(ARGV[1], ARGV[2], '0')
return done(1)
