-- Start a registering tournament with the state computed from registration version
-- `registration_version`: it moves to running (state rev 1) and off the due list, with its events.
-- KEYS: tournament events running list_registering list_running due
-- ARGV: registration_version state now_ms id created_ms maxlen ...
-- Returns: 1 started, 0 registrations changed meanwhile, -1 not registering any more
if redis.call('HGET', KEYS[1], 'status') ~= 'registering' then return -1 end
if tonumber(redis.call('HGET', KEYS[1], 'rv') or '0') ~= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'status', 'running', 'state', ARGV[2], 'rev', 1, 'started_ms', ARGV[3])
redis.call('SADD', KEYS[3], ARGV[4])
redis.call('ZREM', KEYS[4], ARGV[4])
redis.call('ZADD', KEYS[5], ARGV[5], ARGV[4])
redis.call('ZREM', KEYS[6], ARGV[4])
for i = 7, #ARGV do redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[6], '*', 'e', ARGV[i]) end
return 1
