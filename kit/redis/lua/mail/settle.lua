-- A claimed mail went (or is given up): forget it and remember its id, so it is never queued or
-- sent again.
-- KEYS: claimed mail sent player
-- ARGV: id keep_s
-- Returns: 1
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2])
redis.call('SREM', KEYS[4], ARGV[1])
redis.call('SET', KEYS[3], '1', 'EX', ARGV[2])
return 1
