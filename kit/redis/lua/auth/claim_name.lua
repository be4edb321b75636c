-- Give a player's account a new name: copy its fields under the new name's key, only if that name
-- is free (or is already this player's: a rename tried again). The old key goes with auth/drop.
-- KEYS: account
-- (account: the new name's account hash)
-- ARGV: player_id new_name ...
-- (after the name: field value pairs, the old account's other fields)
-- Returns: 1 the name is the player's now, 0 the name is taken by another account
local owner = redis.call('HGET', KEYS[1], 'id')
if owner and owner ~= ARGV[1] then return 0 end
if not owner then
  for i = 3, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
end
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'name', ARGV[2])
return 1
