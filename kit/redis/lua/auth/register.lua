-- Create an account, only if its user name is free (a name is taken exactly once, by any replica).
-- KEYS: account
-- ARGV: player_id name salt hash scrypt_n scrypt_r scrypt_p created_ms [display_name]
-- Returns: 1 created, 0 the name is taken
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'name', ARGV[2], 'salt', ARGV[3], 'hash', ARGV[4],
           'n', ARGV[5], 'r', ARGV[6], 'p', ARGV[7], 'created', ARGV[8])
if ARGV[9] then redis.call('HSET', KEYS[1], 'dn', ARGV[9]) end
return 1
