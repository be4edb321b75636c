-- On one Redis (which checks no slots): the player's claim on the game (claims.py) and the
-- enqueue in one script, instead of claim, enqueue and the claim's re-pointing in three round
-- trips (the order gateway/matchmaking/claims.py keeps across slots on a cluster is moot inside
-- one atomic script). Another bucket's claim refuses the search before anything is written; else
-- the ticket is queued (matchmaking/queueing, paired at once) and the claim names the ticket the
-- bucket answered, `<bucket id>|<ticket>` (claims.py claim_token), for claim_ttl_ms. The player's
-- block lists (blocks, blocked_by: kit/redis/keys.py player_key) are read here too, another slot:
-- a cluster's caller reads them apart and passes them to enqueue.
-- KEYS: queue tickets leases players owners results matches gc requests claim blocks blocked_by
-- ARGV: bucket_id ticket player_id player rating now_ms lease_until_ms hard_expiry_ms keys_ttl_ms request_key owner claim_ttl_ms base_window widen_per_ms max_window min_seats max_seats fill_wait_ms result_ttl_ms most
-- Returns: {3, holder} another bucket's search holds the claim (nothing written), else as enqueue:
--   {1, matches} queued, {2, ticket, enqueued ms} resumed (this request key's, or the player's ticket here)
-- include: matchmaking/bucket
-- include: matchmaking/pairing
-- include: matchmaking/queueing
local claim, prefix = KEYS[10], ARGV[1] .. '|'
local holder = redis.call('GET', claim)
if holder and string.sub(holder, 1, #prefix) ~= prefix then return {3, holder} end
local pairing = {}
for i = 13, 20 do pairing[#pairing + 1] = tonumber(ARGV[i]) end
local r = queue_ticket(ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]),
  tonumber(ARGV[8]), tonumber(ARGV[9]), ARGV[10], ARGV[11], blocked_ids(KEYS[11], KEYS[12]), pairing)
local named = ARGV[2]
if r[1] ~= 1 then named = r[2] end
redis.call('SET', claim, prefix .. named, 'PX', ARGV[12])
return r
