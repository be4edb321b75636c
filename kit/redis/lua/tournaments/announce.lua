-- A director's announcement, once per request id and at most `limit` in `window_ms`: records the
-- request (with its recipients), the rate, the audit entry and the event together.
-- KEYS: request rate events audit
-- ARGV: now_ms window_ms limit recipients request_ttl_s maxlen audit event member
-- Returns: {1, recipients} sent before (a retry), {0, recipients} sent now, {-1, retry_after_ms} too many
local seen = redis.call('GET', KEYS[1])
if seen then return {1, tonumber(seen)} end
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - window)
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  return {-1, tonumber(oldest[2]) + window - now}
end
redis.call('ZADD', KEYS[2], now, ARGV[9])
redis.call('PEXPIRE', KEYS[2], window)
redis.call('SET', KEYS[1], ARGV[4], 'EX', tonumber(ARGV[5]))
redis.call('RPUSH', KEYS[4], ARGV[7])
redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[6], '*', 'e', ARGV[8])
return {0, tonumber(ARGV[4])}
