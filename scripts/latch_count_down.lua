-- latch_count_down: counts a latch down by one, never below 0; at 0 every
-- waiter of every client is woken.
--
-- KEYS[1]  latch hash, as in latch_set
-- ARGV[1]  request id; a retry sends the same id
-- ARGV[2]  publish command: "publish" or "spublish"
-- ARGV[3]  channel of the latch
-- ARGV[4]  how long the applied set remembers a request, in ms
--
-- Replies  {1, count}  counted down; count is what remains (a retry of an
--                      applied request counts nothing more and gets the
--                      count now)
--          {0, "0"}    the latch was 0, absent or expired: nothing changed
--
-- The count that reaches 0 publishes the wake-all message ("1") on the
-- channel, through pcall: a client without the right to publish (ACL)
-- still counts down, once, and is told so. An error raised after the
-- write would report a count down that happened as failed, and a retry
-- as a new request would count twice; the waiters wake by their capped
-- sleep instead. The hash stays (count "0") until it expires, with the
-- request in its applied set, so a retry finds the record even after the
-- latch expired or was set again (see latch_set). The expiry is left as
-- rdl_latch_set() gave it.
--@include clock
--@include applied
--@include latch

-- s - 1 for a decimal string s > 0 without leading zeros.
local function decrement(s)
    local i = #s
    while string.byte(s, i) == 48 do
        i = i - 1
    end
    local r = string.sub(s, 1, i - 1) .. string.char(string.byte(s, i) - 1) ..
        string.rep('9', #s - i)
    r = string.match(r, '^0*(.*)$')
    if r == '' then
        return '0'
    end
    return r
end

local id = ARGV[1]
local now, h, live = latch_read(KEYS[1], id)
if applied_is(h[7], id) then
    return {1, live and h[1] or '0'}
end
if not live or h[1] == '0' then
    return {0, '0'}
end
local n = decrement(h[1])
applied_add(KEYS[1], 'd:' .. id, id, {h[3], h[4], h[5], h[6]},
    tonumber(ARGV[4]), {'c', n}, true)
if n == '0' then
    redis.pcall(ARGV[2], ARGV[3], '1')
end
return {1, n}
