-- Take a player out of an open room; the last one out closes it (kept closed_ttl, within its
-- expiry); a leaving host hands the room to the next seat.
-- KEYS: meta seats who
-- ARGV: player_id channel code now_ms closed_ttl_ms
-- Returns: {'OK' | 'NOT_IN_ROOM' | 'STATE' (not open), snapshot} or {'NOT_FOUND'}
-- include: rooms/room
if redis.call('EXISTS', META) == 0 then return {'NOT_FOUND'} end
local pid = ARGV[1]
if redis.call('HEXISTS', WHO, pid) == 0 then return {'NOT_IN_ROOM', snapshot()} end
if redis.call('HGET', META, 's') ~= 'open' then return {'STATE', snapshot()} end
redis.call('LREM', SEATS, 0, pid)
redis.call('HDEL', WHO, pid)
if redis.call('LLEN', SEATS) == 0 then
  local until_ms = math.min(tonumber(redis.call('HGET', META, 'x')), tonumber(ARGV[4]) + tonumber(ARGV[5]))
  redis.call('HSET', META, 's', 'closed', 'x', until_ms)
  expire_at(until_ms)
elseif redis.call('HGET', META, 'h') == pid then
  local next_host = redis.call('LINDEX', SEATS, 0)
  redis.call('HSET', META, 'h', next_host, 'hb', redis.call('HGET', WHO, next_host))
end
changed(ARGV[2], ARGV[3])
return {'OK', snapshot()}
