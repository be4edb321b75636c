-- Start a player's vacation now (idempotent while one runs). A vacation that ended by itself is
-- settled first (its hours count); a new UTC year starts the count afresh. The length is whole
-- hours (0: what is left of the allowance, whole hours); its interval, with the planned end, goes
-- to the log the turn clocks read (gateway/correspondence.py), entries older than keep_from go.
-- KEYS: vacation log
-- ARGV: now year allowance length keep_from
-- Returns: {1 started | 0 one runs already | -1 no allowance left | -2 longer than what is left,
--   start ms ('' none), end ms ('' none), year, used ms}
local HOUR = 3600000
local now = tonumber(ARGV[1])
local year = ARGV[2]
local cur = redis.call('HMGET', KEYS[1], 's', 'e', 'y', 'u')
local s, e, y = cur[1], cur[2], cur[3]
local used = tonumber(cur[4] or '0')
if s and now >= tonumber(e) then
  used = used + tonumber(e) - tonumber(s)
  s, e = nil, nil
  redis.call('HDEL', KEYS[1], 's', 'e')
  redis.call('HSET', KEYS[1], 'u', string.format('%d', used))
end
if s then return {0, s, e, y or year, string.format('%d', used)} end
if y ~= year then used = 0 end
local left = tonumber(ARGV[3]) - used
left = left - left % HOUR
if left < HOUR then return {-1, '', '', year, string.format('%d', used)} end
local length = tonumber(ARGV[4])
if length == 0 then length = left end
if length > left then return {-2, '', '', year, string.format('%d', used)} end
s = ARGV[1]
e = string.format('%d', now + length)
redis.call('HSET', KEYS[1], 's', s, 'e', e, 'y', year, 'u', string.format('%d', used))
redis.call('ZADD', KEYS[2], s, s .. '|' .. e)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[5])
return {1, s, e, year, string.format('%d', used)}
