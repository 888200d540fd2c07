-- sem_acquire: one try to take a permit of a semaphore.
--
-- KEYS[1..2] hash and expiries, as in lib/sem
-- ARGV[1]  owner string
-- ARGV[2]  lease in ms (> 0)
-- ARGV[3]  request id, unique per request; a retry sends the same id
-- ARGV[4]  registration lifetime in ms if the caller waits when no permit
--          is free; "" for a one-shot try (not registered)
-- ARGV[5]  publish command: "publish" or "spublish"
-- ARGV[6]  channel of the semaphore
-- ARGV[7]  the caller's total: stored if the name has none
-- ARGV[8]  retention of the keys after the last lease, in ms
--
-- Replies  {1, token, count}      a permit was taken; the owner now holds
--                                 count permits
--          {0, sleep, registered} no permit free: sleep at most `sleep` ms
--                                 (until the earliest holder's lease
--                                 ends); registered 1 if the caller now
--                                 waits in the registry
--
-- Each acquisition takes one more permit, also for an owner that holds
-- some (all of an owner's permits share one lease, never shortened), and
-- gets a token of its own: the larger of the last token + 1 and the
-- server time in microseconds, as for the other kinds. Holders whose
-- lease ended are dropped first, and the permits they free wake waiters.
-- A retry of an applied request returns the same result.
--@include waiters
--@include sem
local me, lease = ARGV[1], tonumber(ARGV[2])
local now, us = sem_now()
local freed, used = sem_purge(now)
local total = sem_total(ARGV[7])
local h = redis.call('HMGET', KEYS[1], 'c:' .. me, 'k:' .. me, 'r:' .. me,
    't', 'q:' .. me, 'qh', 'qt')

if h[1] and h[3] == ARGV[3] then
    return {1, tonumber(h[2]), tonumber(h[1])}
end
if used >= total then
    local sleep = sem_first_expiry(now)
    if ARGV[4] == '' then
        return {0, sleep, 0}
    end
    waiter_add(KEYS[1], me, tonumber(ARGV[4]), now, h[7], h[5])
    sem_keep(tonumber(ARGV[4]))
    return {0, sleep, 1}
end

local token = math.max(tonumber(h[4] or '0') + 1, us)
local ts = string.format('%d', token)
local count = tonumber(h[1] or '0') + 1
used = used + 1
redis.call('HSET', KEYS[1], 'c:' .. me, count, 'k:' .. me, ts, 'r:' .. me,
    ARGV[3], 't', ts, 'u', used)
local x = tonumber(redis.call('ZSCORE', KEYS[2], me) or '0')
local earliest = sem_first_expiry(now)
if now + lease > x then
    redis.call('ZADD', KEYS[2], now + lease, me)
end
if h[5] then
    waiter_remove(KEYS[1], me, h[5])
end
sem_keep(lease + tonumber(ARGV[8]))
-- Permits that expired holders left, beyond the one taken, go to waiters.
sem_wake(math.min(freed, total - used), ARGV[5], ARGV[6])
-- A lease shorter than every other holder's: the first waiter learns when
-- this permit may come back (it slept until the earliest lease it saw).
if x == 0 and (earliest < 0 or lease < earliest) then
    local q = redis.call('HMGET', KEYS[1], 'qh', 'qt')
    if waiters_maybe(q[1], q[2]) then
        waiter_recap(KEYS[1], q[1], q[2], me, lease, ARGV[5], ARGV[6])
    end
end
return {1, token, count}
