-- Release a lease or claim (a key SET NX PX to a random token: one holder at a time; the rating
-- sweeper's lock, a search's per-game claim, the migration lock), only while this
-- holder's token is still in it; a lease that ran out and was taken by another stays theirs.
-- KEYS: lease
-- ARGV: token
-- Returns: 1 released, 0 not held by `token`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
