-- Pair a bucket (matchmaking/pairing says how), after sweeping its expired leases and results.
-- KEYS: queue tickets leases players owners results matches gc requests
-- ARGV: now_ms base_window widen_per_ms max_window min_seats max_seats fill_wait_ms result_ttl_ms keys_ttl_ms most
-- Returns: {{game id, {tickets in seat order}, {player bytes in seat order}}, ...} (at most `most`)
-- include: matchmaking/bucket
-- include: matchmaking/pairing
local now = tonumber(ARGV[1])
sweep(now)
return pair_bucket(now, tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]),
  tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10]))
