-- maybe_nil: a test script, batched with the plain lock's scripts into a
-- test batch (tests/CMakeLists.txt) that test_batch.c runs with EVAL.
--
-- KEYS[1]  any key (unused)
-- ARGV[1]  "nil", or a value
--
-- Reply    nil if ARGV[1] is "nil", else ARGV[1]: no real script returns
--          nil today, and a nil must not cost the other calls their
--          replies.
--@batch
if ARGV[1] == 'nil' then
    return nil
end
return ARGV[1]
