-- lock_release: releases one level of an owner's hold.
--
-- KEYS[1]  hold   hash, as in lock_acquire
-- KEYS[2]  fence  hash, as in lock_acquire; also holds the applied set
-- ARGV[1]  owner string
-- ARGV[2]  request id; a retry sends the same id
-- ARGV[3]  publish command: "publish" or "spublish"
-- ARGV[4]  channel of the lock
-- ARGV[5]  retention of the fence key, in ms
-- ARGV[6]  how long the applied set remembers a request, in ms (longer
--          than the client retries one)
-- ARGV[7]  "" for a release; or the id of an acquire request whose outcome
--          the client does not know (or that was cancelled): the level is
--          released only if the hold's last request is that one
-- (ARGV[1..7] are the same for every kind's release: src/lock/release.c)
--
-- Replies  {1, count}  released one level; count levels remain (0: freed,
--                      and one wake-one message was published)
--          {0}         the owner does not hold the lock (nothing changed)
--
-- A retry of an applied request returns the same result instead of
-- releasing again: the hold remembers the last request id, and the applied
-- set remembers the release that freed the lock, however many holds came
-- and went since (docs/design-notes.md "Request ids"). The fence also gets the
-- freed hold's token back: a hold the watchdog kept for longer than the
-- fence's retention may have outlived its fence key.
--@include applied

local h = redis.call('HMGET', KEYS[1], 'o', 'n', 'r', 't')

if h[1] ~= ARGV[1] then
    if redis.call('HEXISTS', KEYS[2], 'd:' .. ARGV[2]) == 1 then
        return {1, 0}
    end
    return {0}
end
if h[3] == ARGV[2] then
    return {1, tonumber(h[2])}
end
if ARGV[7] ~= '' and h[3] ~= ARGV[7] then
    return {0}
end

local n = tonumber(h[2]) - 1
if n > 0 then
    redis.call('HSET', KEYS[1], 'n', n, 'r', ARGV[2])
    return {1, n}
end
redis.call('DEL', KEYS[1])
local t = redis.call('TIME')
applied(KEYS[2], 'd:' .. ARGV[2],
    tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000),
    tonumber(ARGV[6]), h[4])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
-- pcall: a client without access to the channel (ACL) still frees the
-- lock; its waiters then wake by their capped sleeps.
redis.pcall(ARGV[3], ARGV[4], '0')
return {1, 0}
