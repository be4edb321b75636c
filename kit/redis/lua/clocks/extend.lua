-- Move a correspondence turn's standing deadline (its player was on vacation: the clock stood
-- still), if that turn is still the clock's: the member keeps its name, its score and the clock's
-- `d` become the new deadline, `b` keeps the deadline the version was armed with (the turn's start
-- is b - per-move time). Any claim on the member is dropped. Setting the same deadline again is
-- harmless, so replicas repeating it agree. The one Lua besides clocks/arm_function that writes
-- the clock keys; it never arms a turn.
-- KEYS: clock clocks claimed
-- ARGV: member version deadline
-- Returns: {1 moved | 0 not the clock's turn any more}
local cur = redis.call('HMGET', KEYS[1], 'v', 'm', 'd', 'b')
redis.call('ZREM', KEYS[3], ARGV[1])
if cur[1] ~= ARGV[2] or cur[2] ~= ARGV[1] then return {0} end
local base = cur[3]
if cur[4] then
  local bv, bd = string.match(cur[4], '^(%d+)|(%d+)$')
  if bv == ARGV[2] then base = bd end
end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
redis.call('HSET', KEYS[1], 'd', ARGV[3], 'b', ARGV[2] .. '|' .. base)
return {1}
