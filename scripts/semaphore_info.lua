-- semaphore_info: reads the state of a semaphore. Writes nothing.
--
-- KEYS[1..2] hash and expiries, as in lib/sem
-- ARGV[1]  owner string asked about
--
-- Reply    {locked, count, pttl, token, holders, waiters, position, held,
--          permits}: the info reply of every kind (src/lock/lock_int.h)
--          locked   1 if any permit is held
--          count    the permits the asked owner holds
--          pttl     the asked owner's remaining lease if it holds any;
--                   else the earliest holder's (when a permit may come
--                   back); -2 if no permit is held
--          token    latest token issued for the name (0 if none is
--                   remembered)
--          holders  permits held (holders whose lease ended not counted)
--          waiters  live registrations in the waiter registry
--          position 0 (a registry keeps no order)
--          held     0 (permits are not levels of one hold)
--          permits  the total in force; 0 if none is stored (the
--                   client reports its object's)
--@no-writes
--@include clock
--@include waiters
local now = clock_now()
local h = redis.call('HMGET', KEYS[1], 'u', 't', 'P', 'qh', 'qt',
    'c:' .. ARGV[1])
local used = tonumber(h[1] or '0')
local dead = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
for i = 1, #dead do
    used = used - tonumber(redis.call('HGET', KEYS[1], 'c:' .. dead[i]) or '0')
end
used = math.max(used, 0)
local count, pttl = 0, -2
local mine = tonumber(redis.call('ZSCORE', KEYS[2], ARGV[1]) or '0')
if h[6] and mine > now then
    count = tonumber(h[6])
    pttl = mine - now
elseif used > 0 then
    local first = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. now, '+inf',
        'WITHSCORES', 'LIMIT', 0, 1)
    if #first > 0 then
        pttl = tonumber(first[2]) - now
    end
end
local locked = 0
if used > 0 then
    locked = 1
end
return {locked, count, pttl, tonumber(h[2] or '0'), used,
    waiters_count(KEYS[1], h[4], h[5]), 0, 0, tonumber(h[3] or '0')}
