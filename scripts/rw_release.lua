-- rw_release: releases one level of the read or the write side.
--
-- KEYS[1..3] hold, fence, waiting writers, as in rw_acquire
-- ARGV[1]  owner string
-- ARGV[2]  request id; a retry sends the same id
-- ARGV[3]  publish command: "publish" or "spublish"
-- ARGV[4]  channel of the lock
-- ARGV[5]  retention of the fence key, in ms
-- ARGV[6]  "r" or "w"
-- ARGV[7]  optional: release only if the side's last request is this
--          acquire request (undo of a cancelled or unknown acquisition)
--
-- Replies  {1, count}  released one level; count levels remain
--          {0}         the owner does not hold that side (nothing changed)
--
-- When the last reader or the writer leaves, every waiter is woken
-- (message "1"): readers may all proceed, and writers compete. A retry of
-- a final release finds its id in the fence and answers the same.
local me, side = ARGV[1], ARGV[6]
local cnt, req, fields
if side == 'w' then
    local h = redis.call('HMGET', KEYS[1], 'w', 'wn', 'wr')
    if h[1] ~= me then
        cnt = nil
    else
        cnt, req = tonumber(h[2]), h[3]
    end
    fields = {'w', 'wn', 'wt', 'wr', 'x:w'}
else
    local h = redis.call('HMGET', KEYS[1], 'r:' .. me, 'q:r:' .. me)
    cnt, req = tonumber(h[1]), h[2]
    fields = {'r:' .. me, 'q:r:' .. me, 'x:r:' .. me, 't:r:' .. me}
end
local done_key = 'r:' .. side .. ':' .. me

if not cnt then
    if redis.call('HGET', KEYS[2], done_key) == ARGV[2] then
        return {1, 0}
    end
    return {0}
end
if req == ARGV[2] then
    return {1, cnt}
end
if ARGV[7] and req ~= ARGV[7] then
    return {0}
end
if cnt > 1 then
    if side == 'w' then
        redis.call('HSET', KEYS[1], 'wn', cnt - 1, 'wr', ARGV[2])
    else
        redis.call('HSET', KEYS[1], 'r:' .. me, cnt - 1, 'q:r:' .. me, ARGV[2])
    end
    return {1, cnt - 1}
end
redis.call('HDEL', KEYS[1], unpack(fields))
redis.call('HSET', KEYS[2], done_key, ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
if redis.call('HLEN', KEYS[1]) == 0 then
    redis.call('DEL', KEYS[1])
end
-- Wake waiters when the lock may have become available to them: the
-- writer left, or the last reader did.
local readers = 0
if side == 'r' then
    local f = redis.call('HKEYS', KEYS[1])
    for i = 1, #f do
        if string.sub(f[i], 1, 2) == 'r:' then
            readers = readers + 1
        end
    end
end
if side == 'w' or readers == 0 then
    redis.pcall(ARGV[3], ARGV[4], '1')
end
return {1, 0}
