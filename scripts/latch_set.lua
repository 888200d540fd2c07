-- latch_set: sets a count-down latch's count, only if it is 0, absent or
-- expired.
--
-- KEYS[1]  latch hash ("<prefix>:latch:{name}"): c = the count, a decimal
--          string (counts go up to 2^64 - 1, beyond Lua's exact numbers);
--          x = when the latch expires (server time, ms); and the applied
--          set (lib/applied)
-- ARGV[1]  count, decimal, >= 1
-- ARGV[2]  time to live of the latch, in ms
-- ARGV[3]  request id; a retry sends the same id
-- ARGV[4]  how long the applied set remembers a request, in ms
--
-- Replies  {1, count}  set (or a retry of a set that was applied: count is
--                      the count now)
--          {0, count}  the count is above 0: nothing changed
--
-- An expired latch reads 0. Its hash outlives the expiry by the applied
-- set's window (PEXPIRE ttl + window), and a trip to 0 keeps it too, so a
-- retried set or count down finds its record even after the latch
-- expired or was set again: nothing is applied twice.
--@include clock
--@include applied
--@include latch

local id = ARGV[3]
local now, h, live = latch_read(KEYS[1], id)
if applied_is(h[7], id) then
    return {1, live and h[1] or '0'}
end
if live and h[1] ~= '0' then
    return {0, h[1]}
end
local ttl = tonumber(ARGV[2])
local window = tonumber(ARGV[4])
applied_add(KEYS[1], 'd:' .. id, id, {h[3], h[4], h[5], h[6]}, window,
    {'c', ARGV[1], 'x', now + ttl}, true)
redis.call('PEXPIRE', KEYS[1], ttl + window)
return {1, ARGV[1]}
