-- lib/grant: how the plain lock's scripts (lock_acquire, and each part of
-- lock_acquire_multi) re-enter and grant a hold, pulled into them when they
-- are embedded, after lib/clock and lib/waiters. Not a script of its own.

-- One more level of the owner's hold (count n after it), for request id;
-- re-entering never shortens the hold.
local function reenter(key, n, id, lease)
    redis.call('HSET', key, 'n', n, 'r', id)
    keep_lease(key, lease)
end

-- A new hold of `key` for owner me: the token is max(last + 1, us), us the
-- server time in microseconds (lib/clock), read before the grant
-- (docs/design-notes.md "Fencing tokens: the exact guarantee"); the
-- grants of one run (the parts of lock_acquire_multi, the calls of a
-- batch) share it. mine: the owner's registration seq, if it waited; qh,
-- qt: the registry's bounds. A grant while others wait tells the first of
-- them the new lease (waiter_recap). Returns the token. Numbers that go to
-- redis.call as they came (lease: ARGV's string, count '1') save the
-- server a number-to-text conversion each (docs/benchmarks.md).
local function grant(key, me, id, lease, last, mine, qh, qt, pubcmd, channel)
    local now, us = clock_now()
    local token = math.max(tonumber(last or '0') + 1, us)
    redis.call('HSET', key, 'o', me, 'n', '1', 't', string.format('%d', token),
        'r', id)
    redis.call('PEXPIRE', key, lease)
    if mine then
        waiter_remove(key, me, mine)
    end
    if waiters_maybe(qh, qt) then
        waiter_recap(key, qh, qt, me, lease, now, pubcmd, channel)
    end
    return token
end
