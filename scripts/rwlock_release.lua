-- rwlock_release: releases one level of the read or the write side.
--
-- KEYS[1..3] hold, fence, waiting writers, as in rwlock_acquire; the fence
--          also holds the applied set, as in lock_release
-- ARGV[1]  owner string
-- ARGV[2]  request id; a retry sends the same id
-- ARGV[3]  publish command: "publish" or "spublish"
-- ARGV[4]  channel of the lock
-- ARGV[5]  retention of the fence key, in ms
-- ARGV[6]  how long the applied set remembers a request, in ms
-- ARGV[7]  "" or an acquire request: release only if the side's last
--          request is that one (undo of a cancelled or unknown acquisition)
-- ARGV[8]  "r" or "w"
--
-- Replies  {1, count}  released one level; count levels remain
--          {0}         the owner does not hold that side (nothing changed)
--
-- When the last reader or the writer leaves: if readers wait (the fence's
-- "rw" flag) every waiter is woken (message "1": readers may all proceed,
-- writers compete); else the first live waiting writer is named, so one
-- writer wakes across all clients; else nothing is published. A retry of
-- a final release finds its id in the applied set and answers the same.
--@include clock
--@include hash
--@include applied
--@include release
--@include rwlock

local me, side = ARGV[1], ARGV[8]
-- The side's fields: count, last request, and the others of the hold.
local fields = {'wn', 'wr', 'w', 'wt', 'x:w'}
if side ~= 'w' then
    fields = rw_reader_fields(me)
end
local h = redis.call('HMGET', KEYS[1], fields[1], fields[2], 'w')
local held = h[1] and (side ~= 'w' or h[3] == me)
-- Released by this request: its record in the fence's applied set (one
-- field per request, named by it).
local record = not held and redis.call('HGET', KEYS[2], 'd:' .. ARGV[2])
local r = release_level(KEYS[1], held, h[1], h[2], record, ARGV[2], ARGV[7],
    fields[1], fields[2])
if r then
    return r
end
local now = clock_now()
-- The fence: the applied set's state, and whether readers wait.
local fc = redis.call('HMGET', KEYS[2], 'dn', 'dp', 'g', 'gs', 'rw')
applied_add(KEYS[2], 'd:' .. ARGV[2], ARGV[2], fc, tonumber(ARGV[6]), {},
    true)
redis.call('PEXPIRE', KEYS[2], ARGV[5])
-- Wake waiters when the lock may have become available to them: the
-- writer left, or the last live reader did. Readers whose own lease ended
-- (a crashed reader's share) are purged here and do not count: a writer
-- must not sleep on a share that no longer exists. The hash goes when
-- its last field does.
local gone, readers = fields, 0
if side == 'r' then
    gone = {unpack(fields)}
    local f = redis.call('HGETALL', KEYS[1])
    for i = 1, #f, 2 do
        local k = f[i]
        if string.sub(k, 1, 4) == 'x:r:' and k ~= fields[3] then
            if tonumber(f[i + 1]) > now then
                readers = readers + 1
            else
                rw_reader_fields(string.sub(k, 5), gone)
            end
        end
    end
end
hdel_all(KEYS[1], gone)
if side == 'w' or readers == 0 then
    if fc[5] then
        redis.call('HDEL', KEYS[2], 'rw')
        redis.pcall(ARGV[3], ARGV[4], '1')
    else
        local first = redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. now, '+inf',
            'LIMIT', 0, 1)[1]
        if first then
            redis.pcall(ARGV[3], ARGV[4], first)
        end
    end
end
return {1, 0}
