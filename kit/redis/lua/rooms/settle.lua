-- A starting room's game exists (started) or never will (closed): set the state and its expiry.
-- Only for the game id the room is starting (a late or repeated settle changes nothing).
-- KEYS: meta seats who
-- ARGV: game_id channel code expires_ms state
-- Returns: {'OK', snapshot} or {'NOT_FOUND'}
-- include: rooms/room
if redis.call('EXISTS', META) == 0 then return {'NOT_FOUND'} end
if redis.call('HGET', META, 's') == 'starting' and redis.call('HGET', META, 'gid') == ARGV[1] then
  redis.call('HSET', META, 's', ARGV[5], 'x', ARGV[4])
  expire_at(tonumber(ARGV[4]))
  changed(ARGV[2], ARGV[3])
end
return {'OK', snapshot()}
