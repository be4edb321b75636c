-- Release a search's claim, if it still holds it (a resent search may hold it now).
-- KEYS: claim
-- ARGV: token
-- Returns: 1 released, 0 not held by `token`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
