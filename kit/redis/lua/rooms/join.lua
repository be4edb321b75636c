-- Seat a player in an open room (again: no change); the join that fills the table moves the room
-- to starting with the game id fixed, so of two joins for the last seat exactly one wins.
-- KEYS: meta seats who
-- ARGV: player_id player game_id channel code
-- Returns: {'OK' | 'STATE' (not open) | 'FULL', snapshot} or {'NOT_FOUND'}
-- include: rooms/room
if redis.call('EXISTS', META) == 0 then return {'NOT_FOUND'} end
local pid = ARGV[1]
if redis.call('HEXISTS', WHO, pid) == 1 then return {'OK', snapshot()} end
if redis.call('HGET', META, 's') ~= 'open' then return {'STATE', snapshot()} end
local n = tonumber(redis.call('HGET', META, 'n'))
if redis.call('LLEN', SEATS) >= n then return {'FULL', snapshot()} end
redis.call('RPUSH', SEATS, pid)
redis.call('HSET', WHO, pid, ARGV[2])
if redis.call('LLEN', SEATS) >= n then redis.call('HSET', META, 's', 'starting', 'gid', ARGV[3]) end
changed(ARGV[4], ARGV[5])
return {'OK', snapshot()}
