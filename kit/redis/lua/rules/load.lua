-- Read a game for judging an action, in one round trip: the first answer to the request id when
-- it was seen before (with the digest of the request it answered), else the game's state fields.
-- The answers are in the state hash ('q' = 1, fields 'r:<request id>'), or in the requests hash
-- for a game created before they moved there (lua/rules/commit).
-- KEYS: state requests
-- ARGV: request
-- Returns: {first answer or '', {v s g n o l f w}, its digest or ''}
local field = 'r:' .. ARGV[1]
local cur = redis.call('HMGET', KEYS[1], 'v', 's', 'g', 'n', 'o', 'l', 'f', 'w', 'q', field, field .. '#')
local prior, digest = '', ''
if ARGV[1] ~= '' then
  if cur[9] == '1' then
    prior, digest = cur[10] or '', cur[11] or ''
  else
    prior = redis.call('HGET', KEYS[2], ARGV[1]) or ''
    if prior ~= '' then digest = redis.call('HGET', KEYS[2], ARGV[1] .. '#') or '' end
  end
end
if prior == '' then digest = '' end
return {prior, {cur[1], cur[2], cur[3], cur[4], cur[5], cur[6], cur[7], cur[8]}, digest}
