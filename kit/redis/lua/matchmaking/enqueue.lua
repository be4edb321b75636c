-- Queue a ticket (matchmaking/queueing says how), or take over the one a search sent again with
-- the same request key queued before. With the pairing arguments (pair.lua's), a new ticket is
-- paired at once in the same call (a round trip and a sweep fewer than a pair call after it).
-- `avoid`: the ids the player blocks or is blocked by (comma-separated; the caller read them, on
-- the player's own slot), never seated at one table with this ticket.
-- KEYS: queue tickets leases players owners results matches gc requests
-- ARGV: ticket player_id player rating now_ms lease_until_ms hard_expiry_ms keys_ttl_ms request_key owner avoid [base_window widen_per_ms max_window min_seats max_seats fill_wait_ms result_ttl_ms most]
-- Returns: {1, matches} queued (matches: as pair.lua's, {} without the pairing arguments),
--   {2, ticket, enqueued ms} the search with this request key, or the player's other search
--   here, resumed (its ticket taken over)
-- include: matchmaking/bucket
-- include: matchmaking/pairing
-- include: matchmaking/queueing
local pairing = nil
if #ARGV > 11 then
  pairing = {}
  for i = 12, 19 do pairing[#pairing + 1] = tonumber(ARGV[i]) end
end
return queue_ticket(ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]),
  tonumber(ARGV[7]), tonumber(ARGV[8]), ARGV[9], ARGV[10], split_ids(ARGV[11]), pairing)
