-- Store a new notice once per notification id, and put it on the account's event stream in the same
-- step. An id stored lately (kept in `seen`, even when the notice was cleared or dropped since) is
-- not stored again. Over `cap` kept notices, the oldest read one goes, else the oldest; the
-- dropped ids go out as an InboxChanged event after the notice's own event.
-- KEYS: notices order unread read seen seq events
-- ARGV: id note event prefix now_ms cap seen_ms seen_max events_max events_keep_s wake ttl_s
-- (note: the Notification bytes; event: the AccountEvent{notification} bytes; prefix: an
-- AccountEvent with only its time, for the InboxChanged; ttl_s > 0: every inbox key expires then
-- (a guest's), 0: kept)
-- Returns: {1 new | 0 seen before, unread now}
-- include: notices/inbox
local id = ARGV[1]
local now = tonumber(ARGV[5])
if redis.call('ZSCORE', KEYS[5], id) then
  return {0, redis.call('ZCARD', KEYS[3])}
end
redis.call('ZADD', KEYS[5], now, id)
redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now - tonumber(ARGV[7]))
local extra = redis.call('ZCARD', KEYS[5]) - tonumber(ARGV[8])
if extra > 0 then redis.call('ZREMRANGEBYRANK', KEYS[5], 0, extra - 1) end
local place = redis.call('INCR', KEYS[6])
local dropped = {}
while redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[6]) do
  local oldest = redis.call('ZRANGE', KEYS[4], 0, 0)
  if #oldest == 0 then oldest = redis.call('ZRANGE', KEYS[2], 0, 0) end
  drop(KEYS[1], KEYS[2], KEYS[3], KEYS[4], oldest[1])
  dropped[#dropped + 1] = oldest[1]
end
redis.call('HSET', KEYS[1], id, ARGV[2])
redis.call('ZADD', KEYS[2], place, id)
redis.call('ZADD', KEYS[3], place, id)
local unread = redis.call('ZCARD', KEYS[3])
local maxlen, keep, wake = ARGV[9], ARGV[10], ARGV[11]
post(KEYS[7], ARGV[3], maxlen, keep, wake)
if #dropped > 0 then
  post(KEYS[7], changed(ARGV[4], unread, {}, dropped, false, false), maxlen, keep, wake)
end
local ttl = tonumber(ARGV[12])
if ttl > 0 then
  for i = 1, 6 do redis.call('EXPIRE', KEYS[i], ttl) end
end
return {1, unread}
