-- semaphore_release: returns one of an owner's permits.
--
-- KEYS[1..2] hash and expiries, as in lib/sem
-- ARGV[1..7] as in lock_release (the same for every kind: owner, request
--          id, publish command, channel, retention in ms, applied-set
--          window in ms, "" or the acquire request to undo)
--
-- Replies  {1, count}  returned one permit; the owner holds count more
--          {0}         the owner holds no permit (nothing changed)
--
-- The permit freed wakes the first registered waiter (one message, naming
-- it), as do permits of holders whose lease ended, found on the way. A
-- retry of an applied request answers the same: the owner's last request
-- id while it holds permits, the applied set once it holds none.
--@include clock
--@include applied
--@include release
--@include waiters
--@include semaphore
local me = ARGV[1]
local now = clock_now()
local freed = semaphore_purge(KEYS[1], KEYS[2], now)
local h = redis.call('HMGET', KEYS[1], 'c:' .. me, 'r:' .. me, 'P', 'dn', 'dp',
    'g', 'gs', 'd:' .. me, 'u', 'qh', 'qt')
local total, used = tonumber(h[3] or '0'), tonumber(h[9] or '0')

if not h[1] then
    semaphore_wake(KEYS[1], math.min(freed, total - used), h[10], h[11], ARGV[3],
        ARGV[4])
end
local r = release_check(h[1], h[1], h[2], h[8], ARGV[2], ARGV[7])
if r then
    return r
end

local n = tonumber(h[1]) - 1
used = math.max(used - 1, 0)
if n > 0 then
    redis.call('HSET', KEYS[1], 'c:' .. me, n, 'r:' .. me, ARGV[2], 'u', used)
else
    redis.call('HDEL', KEYS[1], 'c:' .. me, 'k:' .. me, 'r:' .. me)
    redis.call('ZREM', KEYS[2], me)
    applied_add(KEYS[1], 'd:' .. me, ARGV[2], {h[4], h[5], h[6], h[7]},
        tonumber(ARGV[6]), {'u', used}, not h[8])
end
-- The hash keeps the total and the last token for the retention; the
-- sorted set is kept by the holders it still lists.
keep_ttl(KEYS[1], tonumber(ARGV[5]), 2 * tonumber(ARGV[5]))
semaphore_wake(KEYS[1], math.min(freed + 1, total - used), h[10], h[11], ARGV[3],
    ARGV[4])
return {1, n}
