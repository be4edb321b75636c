-- Cancel a registering tournament: it moves to the cancelled list and off the due list.
-- KEYS: tournament events list_registering list_cancelled due
-- ARGV: now_ms id created_ms maxlen event
-- Returns: 1 cancelled, -1 not registering
if redis.call('HGET', KEYS[1], 'status') ~= 'registering' then return -1 end
redis.call('HSET', KEYS[1], 'status', 'cancelled', 'finished_ms', ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[2])
redis.call('ZADD', KEYS[4], ARGV[3], ARGV[2])
redis.call('ZREM', KEYS[5], ARGV[2])
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[4], '*', 'e', ARGV[5])
return 1
