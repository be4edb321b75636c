-- Set an account's address to confirm: at most `limit` confirmation mails in `window_ms` (the
-- rate window), one live token (a new one replaces the last). The confirmed address stays in use
-- until the new one is confirmed. Setting the confirmed address again drops what was pending and
-- sends nothing; "" removes the address and everything about it (the rate window stays).
-- KEYS: email rate
-- ARGV: address language username token_digest expires_ms now_ms window_ms limit
-- Returns: {0 done, 1 a confirmation mail is to go} or {-1, milliseconds until one more may}
local address = ARGV[1]
if address == '' then
  redis.call('DEL', KEYS[1])
  return {0}
end
if redis.call('HGET', KEYS[1], 'a') == address then
  redis.call('HDEL', KEYS[1], 'p', 'ct', 'ce')
  redis.call('HSET', KEYS[1], 'l', ARGV[2], 'u', ARGV[3])
  return {0}
end
local now, window, limit = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - window)
if redis.call('ZCARD', KEYS[2]) >= limit then
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  return {-1, math.max(1, tonumber(oldest[2]) + window - now)}
end
redis.call('ZADD', KEYS[2], now, ARGV[4])
redis.call('PEXPIRE', KEYS[2], window)
redis.call('HSET', KEYS[1], 'p', address, 'l', ARGV[2], 'u', ARGV[3], 'ct', ARGV[4], 'ce', ARGV[5])
return {1}
