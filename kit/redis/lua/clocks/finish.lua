-- An ended game's record is written and it has left the live lists: its finalise deadline
-- (armed with the end by clocks/arm_function) leaves the deadline set. Only the version that
-- ended, and only while no seat is to act, so a late call can never remove a turn deadline.
-- KEYS: clock clocks
-- ARGV: version
-- Returns: 1 removed | 0 nothing to remove
local cur = redis.call('HMGET', KEYS[1], 'v', 'a', 'm')
if cur[1] == ARGV[1] and (cur[2] or '') == '' and cur[3] and cur[3] ~= '' then
  redis.call('ZREM', KEYS[2], cur[3])
  redis.call('HSET', KEYS[1], 'm', '')
  return 1
end
return 0
