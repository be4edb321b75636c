-- Stop one kind of mail (field sd the digest, si the immediate ones) for the address whose
-- unsubscribe links are signed with `nonce` (checked by the caller); a changed address has
-- another nonce and is left alone.
-- KEYS: email
-- ARGV: nonce field
-- Returns: 1 stopped (now or before) | 0 the address is gone or changed
if redis.call('HGET', KEYS[1], 'n') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], ARGV[2], '1')
return 1
