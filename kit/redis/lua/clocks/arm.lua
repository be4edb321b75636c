-- Arm a game's turn clock after an action whose answer did not (a replayed answer, the game's
-- creation). Refreshes the game's metadata key (gateway/games.py's) with the clock's own TTL
-- refresh: the metadata lives as long as the game can still move.
-- KEYS: clock clocks meta
-- ARGV: game version toact permove now ttl
-- Returns: {1 armed | 0 not, deadline ms ('0' over, '-1' stale)} (see clocks/arm_function)
-- include: clocks/arm_function
local r = arm(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6]))
if r[3] == 1 then redis.call('EXPIRE', KEYS[3], tonumber(ARGV[6])) end
return {r[1], r[2]}
