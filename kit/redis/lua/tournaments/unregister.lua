-- Take a player off a registering tournament; bumps the registration version, writes the event.
-- KEYS: tournament reg who events
-- ARGV: player maxlen event
-- Returns: 1 left, 0 was not in, -1 not registering, -3 no such tournament
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return -3 end
if status ~= 'registering' then return -1 end
if redis.call('ZREM', KEYS[2], ARGV[1]) == 0 then return 0 end
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HINCRBY', KEYS[1], 'rv', 1)
redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[2], '*', 'e', ARGV[3])
return 1
