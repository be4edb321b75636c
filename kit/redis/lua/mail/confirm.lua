-- Confirm the pending address with its token: it becomes the address, with a fresh nonce for its
-- unsubscribe links (the old address's links no longer verify). The token stays remembered (cd) while that address
-- is kept, so the same link opened again answers as the first time.
-- KEYS: email
-- ARGV: token_digest now_ms nonce
-- Returns: {1 confirmed now | 2 confirmed before by this token | 0 unknown or expired, address, username}
local t = ARGV[1]
local row = redis.call('HMGET', KEYS[1], 'ct', 'ce', 'p', 'cd', 'a', 'u')
if row[1] == t and tonumber(row[2]) >= tonumber(ARGV[2]) and row[3] then
  redis.call('HSET', KEYS[1], 'a', row[3], 'n', ARGV[3], 'cd', t)
  redis.call('HDEL', KEYS[1], 'p', 'ct', 'ce')
  return {1, row[3], row[6] or ''}
end
if row[4] == t and row[5] then
  return {2, row[5], row[6] or ''}
end
return {0, '', ''}
