-- semaphore_leave: a waiter that gave up (its budget ran out, it was cancelled)
-- leaves the registry of a semaphore.
--
-- KEYS[1..2] hash and expiries, as in lib/sem (the keys of every sem
--          script; the expiries are read only when no permit is free)
-- ARGV[1]  owner string
-- ARGV[2]  publish command: "publish" or "spublish"
-- ARGV[3]  channel of the semaphore
--
-- Reply    1
--
-- If a permit is free, the wake-up this waiter may have been sent (and
-- will not act on) goes to the next waiter instead. If none is, the first
-- in line is told when the earliest lease ends (lib/waiters:
-- waiter_pass_recap).
--@include clock
--@include waiters
--@include semaphore
local h = redis.call('HMGET', KEYS[1], 'q:' .. ARGV[1], 'qh', 'qt', 'u', 'P')
local free = tonumber(h[4] or '0') < tonumber(h[5] or '0')
if h[1] then
    waiter_remove(KEYS[1], ARGV[1], h[1])
    if not free then
        local now = clock_now()
        waiter_pass_recap(KEYS[1], h[2], h[3],
            semaphore_first_expiry(KEYS[2], now), now, ARGV[2], ARGV[3])
    end
end
if free and waiters_maybe(h[2], h[3]) then
    local woken, head = waiter_next(KEYS[1], h[2], h[3])
    redis.call('HSET', KEYS[1], 'qh', head)
    waiter_wake(ARGV[2], ARGV[3], woken)
end
return 1
