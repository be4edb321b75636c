-- Read a game for judging an action, in one round trip: the first answer to the request id when
-- it was seen before (with the digest of the request it answered), else the game's state fields.
-- The answers are in the state hash (fields 'r:<request id>', 'r:<request id>#': lua/rules/commit).
-- KEYS: state
-- ARGV: request
-- Returns: {first answer or '', {v s g n o l f w}, its digest or ''}
local field = 'r:' .. ARGV[1]
local cur = redis.call('HMGET', KEYS[1], 'v', 's', 'g', 'n', 'o', 'l', 'f', 'w', field, field .. '#')
local prior, digest = '', ''
if ARGV[1] ~= '' and cur[9] then prior, digest = cur[9], cur[10] or '' end
return {prior, {cur[1], cur[2], cur[3], cur[4], cur[5], cur[6], cur[7], cur[8]}, digest}
