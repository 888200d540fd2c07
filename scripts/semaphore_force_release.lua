-- semaphore_force_release: frees every permit, whoever holds them.
--
-- KEYS[1..2] hash and expiries, as in lib/sem
-- ARGV[1..4] as in lock_force_release (publish command, channel, request
--          id, applied-set window in ms)
--
-- Replies  1  permits were held and are now free (as many registered
--             waiters as the total allows were woken)
--          0  no permit was held
--
-- A retry (the reply was lost) gets the first answer again and frees
-- nothing more (lib/force). The total and the last token stay.
--@include clock
--@include hash
--@include applied
--@include force
--@include waiters
--@include semaphore
local now = clock_now()
local first = force_replay(KEYS[1], ARGV[3])
if first then
    return first
end
semaphore_purge(KEYS[1], KEYS[2], now)
local holders = redis.call('ZRANGE', KEYS[2], 0, -1)
if #holders == 0 then
    return force_done(KEYS[1], ARGV[3], 0, tonumber(ARGV[4]))
end
local del = {}
for i = 1, #holders do
    del[#del + 1] = 'c:' .. holders[i]
    del[#del + 1] = 'k:' .. holders[i]
    del[#del + 1] = 'r:' .. holders[i]
end
hdel_all(KEYS[1], del, 3000)
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[1], 'u', 0)
force_done(KEYS[1], ARGV[3], 1, tonumber(ARGV[4]))
local q = redis.call('HMGET', KEYS[1], 'P', 'qh', 'qt')
semaphore_wake(KEYS[1], tonumber(q[1] or '1'), q[2], q[3], ARGV[1], ARGV[2])
return 1
