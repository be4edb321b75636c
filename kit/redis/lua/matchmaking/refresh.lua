-- Extend a search's claim with its ticket's lease, if it still holds it (never re-creates one:
-- a renewal racing the search's own withdrawal must not leave a claim behind).
-- KEYS: claim
-- ARGV: token ttl_ms
-- Returns: 1 extended, 0 not held by `token`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
