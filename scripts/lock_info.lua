-- lock_info: reads the state of a reentrant lock. Writes nothing.
--
-- KEYS[1]  lock hash, as in lock_acquire
-- ARGV[1]  owner string asked about
--
-- Reply    {locked, count, pttl, token, holders, waiters, position, held,
--          permits}: the info reply of every kind (src/lock/lock_int.h)
--          locked   1 if anyone holds the lock, else 0
--          count    the asked owner's hold count (0 if it holds none)
--          pttl     remaining lease in ms; -2 if not locked
--          token    latest fencing token issued for the name (0 if none is
--                   remembered)
--          holders  locked again (one holder at most)
--          waiters  live registrations in the waiter registry
--          position 0 (a registry keeps no order)
--          held     the holder's hold count, whoever it is (0 if free)
--          permits  0 (none stored: the client reports its object's)
--@no-writes
--@include clock
--@include waiters
local h = redis.call('HMGET', KEYS[1], 'o', 'n', 't', 'qh', 'qt')
local token = tonumber(h[3] or '0')
local waiters = waiters_count(KEYS[1], h[4], h[5])
if not h[1] or h[1] == '' then
    return {0, 0, -2, token, 0, waiters, 0, 0, 0}
end
local count = 0
if h[1] == ARGV[1] then
    count = tonumber(h[2])
end
return {1, count, redis.call('PTTL', KEYS[1]), token, 1, waiters, 0,
    tonumber(h[2]), 0}
