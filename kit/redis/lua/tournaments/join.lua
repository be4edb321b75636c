-- Register a player while the tournament is registering and has room; bumps the registration
-- version (a start computed from an older field is refused) and writes the event. A player a
-- director banned never joins again.
-- KEYS: tournament reg who events banned
-- ARGV: player player_json capacity maxlen event
-- Returns: 1 joined, 0 already in, -1 not registering, -2 full, -3 no such tournament, -4 banned
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return -3 end
if redis.call('SISMEMBER', KEYS[5], ARGV[1]) == 1 then return -4 end
if status ~= 'registering' then return -1 end
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 0 end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then return -2 end
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
redis.call('ZADD', KEYS[2], seq, ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
redis.call('HINCRBY', KEYS[1], 'rv', 1)
redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[4], '*', 'e', ARGV[5])
return 1
