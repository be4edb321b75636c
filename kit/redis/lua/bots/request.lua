-- Queue a bot request for its game's bot pools; the list expires with its newest request, so a
-- room nobody serves stays an ordinary room.
-- KEYS: queue
-- ARGV: entry ttl
-- Returns: the queue's length
local n = redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
return n
