-- Read a game for judging an action, in one round trip: the first answer to the request id when
-- it was seen before (with the digest of the request it answered), else the game's state fields.
-- KEYS: state requests
-- ARGV: request
-- Returns: {first answer or '', {v s g n o l f w}, its digest or ''}
local prior = ''
if ARGV[1] ~= '' then prior = redis.call('HGET', KEYS[2], ARGV[1]) or '' end
local digest = ''
if prior ~= '' then digest = redis.call('HGET', KEYS[2], ARGV[1] .. '#') or '' end
return {prior, redis.call('HMGET', KEYS[1], 'v', 's', 'g', 'n', 'o', 'l', 'f', 'w'), digest}
