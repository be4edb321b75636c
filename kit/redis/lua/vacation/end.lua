-- End a player's vacation now (idempotent). Its time, rounded up to whole hours (at least one),
-- counts against its year's allowance; its log entry gets the real end, so each clock stood still
-- exactly as long as the player was away. One that already ended by itself is settled as such.
-- KEYS: vacation log
-- ARGV: now
-- Returns: {1 ended now | 0 none ran | 2 it had ended by itself, start ms ('' none), end ms ('' none),
--   year ('' none), used ms}
local HOUR = 3600000
local now = tonumber(ARGV[1])
local cur = redis.call('HMGET', KEYS[1], 's', 'e', 'y', 'u')
local s, e, y = cur[1], cur[2], cur[3]
local used = tonumber(cur[4] or '0')
if not s then return {0, '', '', y or '', string.format('%d', used)} end
local start, planned = tonumber(s), tonumber(e)
redis.call('HDEL', KEYS[1], 's', 'e')
if now >= planned then
  used = used + planned - start
  redis.call('HSET', KEYS[1], 'u', string.format('%d', used))
  return {2, s, e, y, string.format('%d', used)}
end
local away = now - start
local counted = away + (HOUR - away % HOUR) % HOUR
if counted < HOUR then counted = HOUR end
used = used + counted
redis.call('HSET', KEYS[1], 'u', string.format('%d', used))
redis.call('ZREM', KEYS[2], s .. '|' .. e)
redis.call('ZADD', KEYS[2], s, s .. '|' .. ARGV[1])
return {1, s, ARGV[1], y, string.format('%d', used)}
