-- Delete an account's key, only if it is still the player's (not a name taken again since).
-- KEYS: account
-- ARGV: player_id
-- Returns: 1 deleted, 0 not the player's (nothing done)
if redis.call('HGET', KEYS[1], 'id') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
