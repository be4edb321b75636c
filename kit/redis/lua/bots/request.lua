-- Queue a bot request for its game's bot pools, unless the room's pending requests already cover
-- its empty seats: then answer a pending one (the player's own first), so asking again is safe.
-- The queue, the room's pending requests and the pools' wake-ups expire with the newest request,
-- so a room nobody serves stays an ordinary room.
-- KEYS: queue pending signal
-- ARGV: entry request_id player_id empty_seats ttl
-- Returns: {'QUEUED' | 'PENDING', request_id}
local pending = redis.call('HGETALL', KEYS[2])
if #pending / 2 >= tonumber(ARGV[4]) and #pending > 0 then
  local any = pending[1]
  for i = 1, #pending, 2 do
    if cjson.decode(pending[i + 1])['player_id'] == ARGV[3] then return {'PENDING', pending[i]} end
  end
  return {'PENDING', any}
end
local ttl = tonumber(ARGV[5])
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], ttl)
redis.call('HSET', KEYS[2], ARGV[2], ARGV[1])
redis.call('EXPIRE', KEYS[2], ttl)
redis.call('RPUSH', KEYS[3], '1')
redis.call('EXPIRE', KEYS[3], ttl)
return {'QUEUED', ARGV[2]}
