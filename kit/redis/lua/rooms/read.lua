-- A room as it is.
-- KEYS: meta seats who
-- ARGV: -
-- Returns: {'OK', snapshot} or {'NOT_FOUND'}
-- include: rooms/room
if redis.call('EXISTS', META) == 0 then return {'NOT_FOUND'} end
return {'OK', snapshot()}
