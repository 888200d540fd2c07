-- sem_set: stores the total of a semaphore (rdl_semaphore_set_permits).
--
-- KEYS[1..2] hash and expiries, as in lib/sem
-- ARGV[1]  the new total (> 0)
-- ARGV[2]  publish command: "publish" or "spublish"
-- ARGV[3]  channel of the semaphore
-- ARGV[4]  retention of the keys, in ms
--
-- Reply    the total before (0 if none was stored)
--
-- Raising the total wakes as many registered waiters as permits it frees;
-- lowering it revokes nothing (grants stop until the permits in use fall
-- below it). Setting a value is idempotent, so a retry needs no record.
--@include waiters
--@include sem
local now = sem_now()
sem_purge(now)
local h = redis.call('HMGET', KEYS[1], 'P', 'u', 'qh', 'qt')
local old, used = tonumber(h[1] or '0'), tonumber(h[2] or '0')
local total = tonumber(ARGV[1])
redis.call('HSET', KEYS[1], 'P', total)
sem_keep(1, tonumber(ARGV[4]), 2 * tonumber(ARGV[4]))
sem_wake(total - math.max(old, used), h[3], h[4], ARGV[2], ARGV[3])
return old
