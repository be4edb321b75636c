-- Keep a solo game's score as the player's personal best on its board when it beats the one kept
-- (an equal score keeps the earlier game).
-- KEYS: best bestgame names
-- ARGV: player score game username
-- Returns: 1 a new best, 0 not better
local current = redis.call('ZSCORE', KEYS[1], ARGV[1])
if current and tonumber(current) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[4])
return 1
