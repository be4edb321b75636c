-- Replace an account's password hash, only if the account is still the player's (not renamed or
-- deleted since it was read).
-- KEYS: account
-- ARGV: player_id salt hash scrypt_n scrypt_r scrypt_p
-- Returns: 1 changed, 0 the account is not the player's any more
if redis.call('HGET', KEYS[1], 'id') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'salt', ARGV[2], 'hash', ARGV[3], 'n', ARGV[4], 'r', ARGV[5], 'p', ARGV[6])
return 1
