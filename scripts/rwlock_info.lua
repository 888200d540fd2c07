-- rwlock_info: the state of a read-write lock and of one owner on one side.
--
-- KEYS[1..3] hold, fence, waiting writers, as in rwlock_acquire
-- ARGV[1]  owner string
-- ARGV[2]  "r" or "w": the side asked about
--
-- Replies  {locked, count, pttl, token, holders, waiters, position, held,
--          permits}: the info reply of every kind (src/lock/lock_int.h)
--          locked   1 if anyone holds either side
--          count    the owner's count on that side
--          pttl     remaining life of the lock's hash, -2 if free
--          token    latest fencing token issued for the name
--          holders  readers holding, plus 1 if a writer holds
--          waiters  live waiting writers
--          position 0 (waiting writers are not told their place)
--          held     the writer's hold count (0 if no writer holds)
--          permits  0 (none stored: the client reports its object's)
--
-- Read-only: holders whose expiry has passed are not counted.
--@no-writes
--@include clock
local now = clock_now()
local f = redis.call('HGETALL', KEYS[1])
local h = {}
for i = 1, #f, 2 do
    h[f[i]] = f[i + 1]
end
local holders = 0
for k, v in pairs(h) do
    if (k == 'x:w' or string.sub(k, 1, 4) == 'x:r:') and tonumber(v) > now then
        holders = holders + 1
    end
end
local count = 0
if ARGV[2] == 'w' then
    if h['w'] == ARGV[1] and tonumber(h['x:w'] or '0') > now then
        count = tonumber(h['wn'])
    end
elseif h['r:' .. ARGV[1]] and
    tonumber(h['x:r:' .. ARGV[1]] or '0') > now then
    count = tonumber(h['r:' .. ARGV[1]])
end
local locked = 0
if holders > 0 then
    locked = 1
end
local pttl = -2
if locked == 1 then
    pttl = redis.call('PTTL', KEYS[1])
end
local waiters = redis.call('ZCOUNT', KEYS[3], '(' .. now, '+inf')
local token = tonumber(redis.call('HGET', KEYS[2], 't') or '0')
local held = 0
if h['w'] and tonumber(h['x:w'] or '0') > now then
    held = tonumber(h['wn'])
end
return {locked, count, pttl, token, holders, waiters, 0, held, 0}
