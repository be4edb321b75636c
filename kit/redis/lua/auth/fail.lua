-- Count a failed sign-in (of an account or from a source); the count is forgotten `window_s`
-- after the last failure.
-- KEYS: failures
-- ARGV: now_ms window_s
-- Returns: the failures counted so far (hash fields n: failures, t: last failure ms)
local n = redis.call('HINCRBY', KEYS[1], 'n', 1)
redis.call('HSET', KEYS[1], 't', ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
return n
