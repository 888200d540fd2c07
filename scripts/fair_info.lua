-- fair_info: the state of a fair lock and of one owner. Writes nothing.
--
-- KEYS[1]  lock hash, as in fair_acquire
-- ARGV[1]  owner string
--
-- Replies  {locked, count, pttl, token, holders, waiters, position, held,
--          permits}: the info reply of every kind (src/lock/lock_int.h)
--          locked    1 if anyone holds it (or was handed it and has not
--                    yet confirmed)
--          count     the owner's hold count (0 if it holds none)
--          pttl      remaining lease in ms, -2 if not locked
--          token     latest fencing token issued for the name, 0 if none
--          holders   locked again (one holder at most)
--          waiters   live entries in the queue
--          position  the owner's place among them (1: next), 0 if none
--          held      the holder's hold count, whoever it is (0 if free)
--          permits   0 (none stored: the client reports its object's)
--
-- Lapsed entries not yet dropped are not counted.
--@no-writes
--@include clock
--@include waiters
--@include fairq
local now = clock_now()
local h = redis.call('HMGET', KEYS[1], 'o', 'n', 't', 'e', 'qh', 'qt',
    'q:' .. ARGV[1])
local e = tonumber(h[4] or '0')
local locked, count, pttl, held = 0, 0, -2, 0
if h[1] and h[1] ~= '' and e > now then
    locked, pttl, held = 1, e - now, tonumber(h[2])
    if h[1] == ARGV[1] then
        count = held
    end
end
local position = 0
local mine = h[7] and redis.call('HGET', KEYS[1], 's:' .. h[7])
if mine and tonumber(string.match(mine, '^(%d+):')) > now then
    position = waiters_count(KEYS[1], h[5], h[7])
end
return {locked, count, pttl, tonumber(h[3] or '0'), locked,
    waiters_count(KEYS[1], h[5], h[6]), position, held, 0}
