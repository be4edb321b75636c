-- Create a tournament once per request: a retried request answers the id it made before; a taken
-- id answers "". The new tournament is registering, listed by creation time and, when it has a
-- start time, due then.
-- KEYS: request tournament list_all list_registering due
-- ARGV: id spec created_ms starts_at_ms request_ttl_s
-- Returns: the tournament id this request made, or "" when the id is taken
local existing = redis.call('GET', KEYS[1])
if existing then return existing end
if redis.call('EXISTS', KEYS[2]) == 1 then return '' end
redis.call('HSET', KEYS[2], 'spec', ARGV[2], 'status', 'registering', 'rev', 0, 'rv', 0, 'seq', 0)
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
redis.call('ZADD', KEYS[4], ARGV[3], ARGV[1])
if tonumber(ARGV[4]) > 0 then redis.call('ZADD', KEYS[5], ARGV[4], ARGV[1]) end
redis.call('SET', KEYS[1], ARGV[1], 'EX', tonumber(ARGV[5]))
return ARGV[1]
