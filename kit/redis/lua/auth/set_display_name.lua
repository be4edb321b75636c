-- Set or remove (an empty name) an account's display name, only if the account is still the
-- player's (not renamed or deleted since its token was issued): never a stray hash at an old name.
-- KEYS: account
-- ARGV: player_id display_name
-- Returns: 1 set, 0 the account is not the player's any more
if redis.call('HGET', KEYS[1], 'id') ~= ARGV[1] then return 0 end
if ARGV[2] == '' then
  redis.call('HDEL', KEYS[1], 'dn')
else
  redis.call('HSET', KEYS[1], 'dn', ARGV[2])
end
return 1
