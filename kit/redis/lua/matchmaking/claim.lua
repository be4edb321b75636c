-- Claim a player's one search for a game (kit/redis/keys.py match_claim_key): taken when free,
-- already this search's (renewed), or held by `expected` (moved to this search's ticket).
-- KEYS: claim
-- ARGV: token expected ttl_ms
-- Returns: {1} the claim is `token` now, for ttl_ms; {0, holder} another search holds it
local holder = redis.call('GET', KEYS[1])
if (not holder) or holder == ARGV[1] or (ARGV[2] ~= '' and holder == ARGV[2]) then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
  return {1}
end
return {0, holder}
