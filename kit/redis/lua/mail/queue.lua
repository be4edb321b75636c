-- Queue a mail once per id: not again while it is queued or being sent, nor once it went.
-- KEYS: due mail sent player
-- ARGV: id player to subject text unsub due_ms
-- Returns: 1 queued | 0 queued or sent before
if redis.call('EXISTS', KEYS[2]) == 1 or redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
redis.call('HSET', KEYS[2], 'p', ARGV[2], 'to', ARGV[3], 'subject', ARGV[4], 'text', ARGV[5], 'unsub', ARGV[6], 'tries', 0)
redis.call('ZADD', KEYS[1], ARGV[7], ARGV[1])
redis.call('SADD', KEYS[4], ARGV[1])
return 1
