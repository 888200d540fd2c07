-- echo: a test script, batched with the plain lock's scripts into a test
-- batch (tests/CMakeLists.txt) that test_batch.c runs with EVAL.
--
-- KEYS[1..2]  any keys (unused)
-- ARGV[1..2]  any values
--
-- Reply    {KEYS[1], KEYS[2], ARGV[1], ARGV[2], n}, n 1: what the call
--          sees at its offsets, and a body-level local that every call
--          starts afresh.
--@batch
local n = 0
n = n + 1
return {KEYS[1], KEYS[2], ARGV[1], ARGV[2], n}
