-- Follow a player: one field in the follower's following hash, under the most allowed.
-- KEYS: following
-- ARGV: followed_id entry max
-- Returns: 1 added, 0 followed already (the first entry kept), -1 at the most allowed
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then return -1 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
