-- Open a room with its host seated (a one-seat room is starting at once, its game id fixed).
-- KEYS: meta seats who
-- ARGV: game options per_move_ms host_id host seats min_seats now_ms expires_ms game_id watchable
-- Returns: {'OK', snapshot} or {'TAKEN'} (the code is in use: draw another)
-- include: rooms/room
if redis.call('EXISTS', META) == 1 then return {'TAKEN'} end
redis.call('HSET', META, 'g', ARGV[1], 'o', ARGV[2], 'pm', ARGV[3], 'h', ARGV[4], 'hb', ARGV[5],
           'n', ARGV[6], 'mn', ARGV[7], 's', 'open', 'x', ARGV[9], 'v', 1, 'c', ARGV[8], 'w', ARGV[11])
redis.call('RPUSH', SEATS, ARGV[4])
redis.call('HSET', WHO, ARGV[4], ARGV[5])
if tonumber(ARGV[6]) <= 1 then redis.call('HSET', META, 's', 'starting', 'gid', ARGV[10]) end
expire_at(tonumber(ARGV[9]))
return {'OK', snapshot()}
