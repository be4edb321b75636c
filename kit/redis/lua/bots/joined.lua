-- A bot took its seat for a request: the request is done, wherever it is (in flight, or back on
-- its queue after a lease ran out), so no second bot comes for it.
-- KEYS: inflight pending queue
-- ARGV: request_id
-- Returns: 1 if the request was pending, else 0
local entry = redis.call('HGET', KEYS[2], ARGV[1])
if not entry then return 0 end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[1], entry)
redis.call('LREM', KEYS[3], 0, entry)
return 1
