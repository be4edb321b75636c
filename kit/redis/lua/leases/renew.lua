-- Extend a lease (a key SET NX PX to a random token) only while this holder's token is still in
-- it: a lease that ran out and was taken by another stays theirs (the migration lock's keep-alive).
-- KEYS: lease
-- ARGV: token ms
-- Returns: 1 extended, 0 not held by `token`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
