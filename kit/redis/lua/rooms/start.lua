-- The host starts the room with the players seated (at least the game's minimum): it moves to
-- starting with the game id fixed and the table size set to the seated count.
-- KEYS: meta seats who
-- ARGV: player_id game_id channel code
-- Returns: {'OK' | 'NOT_HOST' | 'NOT_ENOUGH' | 'STATE', snapshot} or {'NOT_FOUND'}
-- include: rooms/room
if redis.call('EXISTS', META) == 0 then return {'NOT_FOUND'} end
if redis.call('HGET', META, 'h') ~= ARGV[1] then return {'NOT_HOST', snapshot()} end
local s = redis.call('HGET', META, 's')
if s == 'starting' or s == 'started' then return {'OK', snapshot()} end
if s ~= 'open' then return {'STATE', snapshot()} end
local count = redis.call('LLEN', SEATS)
if count < tonumber(redis.call('HGET', META, 'mn')) then return {'NOT_ENOUGH', snapshot()} end
redis.call('HSET', META, 's', 'starting', 'gid', ARGV[2], 'n', count)
changed(ARGV[3], ARGV[4])
return {'OK', snapshot()}
