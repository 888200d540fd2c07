-- semaphore_acquire: one try to take a permit of a semaphore.
--
-- KEYS[1..2] hash and expiries, as in lib/sem
-- ARGV[1..7] the acquire contract, as in lock_acquire: owner, lease,
--          request id, "" or the registration lifetime of a caller that
--          waits if no permit is free, publish command, channel of the
--          semaphore, retention of the keys after the last lease (they
--          live between one and two retentions past it)
-- ARGV[8]  the caller's total: stored if the name has none
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
-- A retry of an applied request returns the same result. Uncontended: 7
-- commands (TIME, ZRANGEBYSCORE, HMGET, HSET, ZADD, PTTL, PEXPIRE: the
-- expiries set is new when nobody else holds); the release
-- 8 (TIME, ZRANGEBYSCORE, HMGET, HDEL, ZREM, HSET, PTTL, and a message
-- only if someone waits).
--@include clock
--@include waiters
--@include semaphore
local me, lease, keep = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[7])
local now, us = clock_now()
local freed = semaphore_purge(KEYS[1], KEYS[2], now)
local h = redis.call('HMGET', KEYS[1], 'c:' .. me, 'k:' .. me, 'r:' .. me,
    't', 'q:' .. me, 'qh', 'qt', 'u', 'P')
local used, total = tonumber(h[8] or '0'), tonumber(h[9] or ARGV[8])
if not h[9] then
    redis.call('HSET', KEYS[1], 'P', total)
end

if h[1] and h[3] == ARGV[3] then
    return {1, tonumber(h[2]), tonumber(h[1])}
end
if used >= total then
    local sleep = semaphore_first_expiry(KEYS[2], now)
    if ARGV[4] == '' then
        return {0, sleep, 0}
    end
    -- The keys outlive the registration: a holder's grant gave them its
    -- lease plus the retention, longer than a registration lives.
    waiter_add(KEYS[1], me, tonumber(ARGV[4]), now, sleep, h[7], h[5])
    return {0, sleep, 1}
end

local token = math.max(tonumber(h[4] or '0') + 1, us)
local ts = string.format('%d', token)
local count = tonumber(h[1] or '0') + 1
used = used + 1
redis.call('HSET', KEYS[1], 'c:' .. me, count, 'k:' .. me, ts, 'r:' .. me,
    ARGV[3], 't', ts, 'u', used)
local waiting = waiters_maybe(h[6], h[7])
local earliest = -1
if waiting and not h[1] then
    earliest = semaphore_first_expiry(KEYS[2], now)
end
redis.call('ZADD', KEYS[2], 'GT', now + lease, me)
if h[5] then
    waiter_remove(KEYS[1], me, h[5])
end
keep_ttl(KEYS[1], lease + keep, lease + 2 * keep)
if used == 1 then
    -- Nobody else holds: the last release emptied the expiries, and Redis
    -- deleted the set, so the ZADD made it anew, without a TTL.
    redis.call('PEXPIRE', KEYS[2], lease + 2 * keep)
else
    keep_ttl(KEYS[2], lease + keep, lease + 2 * keep)
end
if waiting then
    -- Permits that expired holders left, beyond the one taken, go to
    -- waiters.
    semaphore_wake(KEYS[1], math.min(freed, total - used), h[6], h[7], ARGV[5],
        ARGV[6])
    -- A new holder with a lease shorter than every other holder's: the
    -- first waiter learns when this permit may come back (it sleeps until
    -- the earliest lease it saw).
    if not h[1] and (earliest < 0 or lease < earliest) then
        local q = redis.call('HMGET', KEYS[1], 'qh', 'qt')
        if waiters_maybe(q[1], q[2]) then
            waiter_recap(KEYS[1], q[1], q[2], me, lease, now, ARGV[5],
                ARGV[6])
        end
    end
end
return {1, token, count}
