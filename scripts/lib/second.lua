-- lib/second: how a fair lock's scripts tell a new second waiter its duty,
-- pulled into them when they are embedded. Not a script of its own.
--
-- The second waiter watches the head: its sleep is capped by the head's
-- entry expiry, so a dead head is purged within a queue lease. A waiter
-- that becomes second is told so by "<owner>|<ms>" (ms: until the head's
-- entry expires): it stays asleep and re-arms its timer (RDL__WAKE_RECAP).
-- It used to be woken and to try, which cost a script call per hand-off.
local function tell_second(expkey, pubcmd, channel, second, head, now)
    local left = tonumber(redis.call('ZSCORE', expkey, head) or now) - now
    if left < 1 then
        left = 1
    end
    redis.pcall(pubcmd, channel, second .. '|' .. left)
end
