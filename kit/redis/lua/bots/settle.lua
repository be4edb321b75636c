-- Decide on a claimed in-flight request: back on its queue (its room still needs a bot) or done
-- (the room is full, started or gone). Only the claim's holder decides (its lease end must match).
-- KEYS: inflight pending queue signal
-- ARGV: entry claimed request_id requeue ttl
-- Returns: 1 if decided, 0 if the claim was no longer this caller's
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) ~= tonumber(ARGV[2]) then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
if ARGV[4] == '1' then
  local ttl = tonumber(ARGV[5])
  redis.call('RPUSH', KEYS[3], ARGV[1])
  redis.call('EXPIRE', KEYS[3], ttl)
  redis.call('RPUSH', KEYS[4], '1')
  redis.call('EXPIRE', KEYS[4], ttl)
else
  redis.call('HDEL', KEYS[2], ARGV[3])
end
return 1
