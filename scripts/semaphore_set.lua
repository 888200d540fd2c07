-- semaphore_set: stores the total of a semaphore (rdl_semaphore_set_permits).
--
-- KEYS[1..2] hash and expiries, as in lib/sem
-- ARGV[1..4] as in every force release (a change applied once:
--          src/lock/lock_int.h): publish command, channel of the
--          semaphore, request id (a retry sends the same id), how long the
--          applied set remembers a request, in ms
-- ARGV[5]  the new total (> 0)
-- ARGV[6]  retention of the keys, in ms
--
-- Reply    the total before (0 if none was stored); a retry of an applied
--          request stores nothing and gets the first reply again
--
-- Raising the total wakes as many registered waiters as permits it frees;
-- lowering it revokes nothing (grants stop until the permits in use fall
-- below it). Storing a value is not idempotent once another client stored
-- another: a retry (its reply was lost) that stored its total again would
-- undo the set made in between. So each set is recorded in the applied
-- set (lib/applied) as "d:<id>:set", valued
-- "<generation>|<total before>|<id>", and a retry that finds its record
-- answers from it. (The suffix keeps the record apart from semaphore_release's
-- "d:<owner>": an owner and a request id of one client may be spelt
-- alike.)
--@include clock
--@include applied
--@include waiters
--@include semaphore
local id = ARGV[3]
local field = 'd:' .. id .. ':set'
local done = redis.call('HGET', KEYS[1], field)
if applied_is(done, id) then
    return tonumber(string.match(done, '^%d+|(%d+)|'))
end
semaphore_purge(KEYS[1], KEYS[2], clock_now())
local h = redis.call('HMGET', KEYS[1], 'P', 'u', 'qh', 'qt', 'dn', 'dp', 'g',
    'gs')
local old, used = tonumber(h[1] or '0'), tonumber(h[2] or '0')
local total = tonumber(ARGV[5])
applied_add(KEYS[1], field, (h[1] or '0') .. '|' .. id, {h[5], h[6], h[7],
    h[8]}, tonumber(ARGV[4]), {'P', total}, not done)
-- The hash, and so the record, lives the retention at least: longer than
-- any window.
keep_ttl(KEYS[1], tonumber(ARGV[6]), 2 * tonumber(ARGV[6]))
semaphore_wake(KEYS[1], total - math.max(old, used), h[3], h[4], ARGV[1], ARGV[2])
return old
