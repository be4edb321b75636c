-- Forget a gateway's lease on a player's presence after the sweep turned it offline, unless the
-- gateway renewed it meanwhile (the score moved: it still holds the player).
-- KEYS: leases
-- ARGV: member lease_end_ms
-- Returns: 1 removed, 0 renewed meanwhile (kept)
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) == tonumber(ARGV[2]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 1
end
return 0
