-- lock_acquire: one try to take or re-enter a reentrant lock.
--
-- KEYS[1]  lock hash, the lock's only key: o = owner ("" or absent: free),
--          n = hold count, t = fencing token (of the hold; while free, the
--          last issued), r = last request applied to the hold, the waiter
--          registry (lib/waiters) and the applied set (lib/applied).
--          PTTL = the lease while held, the retention while free.
-- ARGV     the acquire contract, the same for every kind (then a kind's
--          own arguments; docs/design-notes.md "Script arguments"):
-- ARGV[1]  owner string "<client-id>:<owner>"
-- ARGV[2]  lease in ms (> 0)
-- ARGV[3]  request id, unique per request; a retry sends the same id
-- ARGV[4]  "" for a one-shot try; else the caller waits if it cannot have
--          the lock now, and this is how long its place in the wait (here
--          a registration) lives in ms, unless it tries again
-- ARGV[5]  publish command: "publish" or "spublish"
-- ARGV[6]  channel of the lock
-- ARGV[7]  retention of the lock's keys after a hold, in ms (not read
--          here: the release sets it)
--
-- Replies  {1, token, count}      acquired (count 1) or re-entered
--          {0, pttl, registered}  held by another owner for pttl more ms;
--                                 registered 1 if the caller now waits in
--                                 the registry
--
-- A retry of a request that was applied (its reply was lost) returns the
-- same result instead of counting again. Tokens: the larger of the last
-- token + 1 and the server time in microseconds (docs/design.md#fencing-tokens). The clock
-- keeps them increasing where the last token is gone or stale: the hash
-- expired (a holder that died, a name unused for the retention), or a
-- failover promoted a replica that missed the latest grants, whose tokens
-- the old master issued before the switch - as long as the new master's
-- clock is not behind the old one's by more than the failover took
-- (docs/design-notes.md "Fencing tokens: the exact guarantee").
-- Uncontended: 4 commands (HMGET, TIME, HSET, PEXPIRE); a re-entry 3 (HMGET,
-- HSET, PEXPIRE ... GT; 4 before Redis 7.0, with a PTTL). A grant while others
-- wait tells the first of them the new lease (lib/waiters: waiter_recap).
--@batch
--@include clock
--@include waiters
--@include grant
local me = ARGV[1]
local h = redis.call('HMGET', KEYS[1], 'o', 'n', 't', 'r', 'qt', 'q:' .. me,
    'qh')
local lease = tonumber(ARGV[2])

if h[1] == me then
    if h[4] == ARGV[3] then
        return {1, tonumber(h[3]), tonumber(h[2])}
    end
    local n = tonumber(h[2]) + 1
    reenter(KEYS[1], n, ARGV[3], lease)
    return {1, tonumber(h[3]), n}
end

if h[1] and h[1] ~= '' then
    local pttl = redis.call('PTTL', KEYS[1])
    if ARGV[4] == '' then
        return {0, pttl, 0}
    end
    waiter_add(KEYS[1], me, tonumber(ARGV[4]), clock_now(), pttl, h[5],
        h[6])
    return {0, pttl, 1}
end

return {1, grant(KEYS[1], me, ARGV[3], ARGV[2], h[3], h[6], h[7], h[5],
    ARGV[5], ARGV[6]), 1}
