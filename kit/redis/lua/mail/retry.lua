-- A claimed mail failed to go: queue it again at `due_ms` and count the try (a mail erased
-- meanwhile is not queued again).
-- KEYS: claimed due mail
-- ARGV: id due_ms
-- Returns: the tries so far, 0 when the mail is gone
redis.call('ZREM', KEYS[1], ARGV[1])
if redis.call('EXISTS', KEYS[3]) == 0 then return 0 end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
return redis.call('HINCRBY', KEYS[3], 'tries', 1)
