-- lock_leave: a waiter that gave up (its budget ran out, it was cancelled)
-- leaves the waiter registry of a plain lock.
--
-- KEYS[1]  lock hash, as in lock_acquire
-- ARGV[1]  owner string
-- ARGV[2]  publish command: "publish" or "spublish"
-- ARGV[3]  channel of the lock
--
-- Reply    1
--
-- If the lock is free, the wake-up this waiter may have been sent (and
-- will not act on) goes to the next waiter instead. If it is held, the
-- first in line is told the holder's lease (lib/waiters:
-- waiter_pass_recap).
--@include clock
--@include waiters
local h = redis.call('HMGET', KEYS[1], 'o', 'q:' .. ARGV[1], 'qh', 'qt')
local held = h[1] and h[1] ~= ''
if h[2] then
    waiter_remove(KEYS[1], ARGV[1], h[2])
    if held then
        waiter_pass_recap(KEYS[1], h[3], h[4], redis.call('PTTL', KEYS[1]),
            clock_now(), ARGV[2], ARGV[3])
    end
end
if not held and waiters_maybe(h[3], h[4]) then
    local woken, head = waiter_next(KEYS[1], h[3], h[4])
    redis.call('HSET', KEYS[1], 'qh', head)
    waiter_wake(ARGV[2], ARGV[3], woken)
end
return 1
