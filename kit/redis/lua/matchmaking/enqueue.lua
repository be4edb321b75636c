-- Queue a ticket, or, for a search sent again with the same request key, take over the ticket
-- that search queued before (still queued, or paired: the caller learns the match on renewal).
-- One queued ticket per player per bucket: another search of the player here is refused. With the
-- pairing arguments (pair.lua's), a new ticket is paired at once in the same call (a round trip
-- and a sweep fewer than a pair call after it).
-- KEYS: queue tickets leases players owners results matches gc requests
-- ARGV: ticket player_id player rating now_ms lease_until_ms hard_expiry_ms keys_ttl_ms request_key owner [base_window widen_per_ms max_window min_seats max_seats fill_wait_ms result_ttl_ms most]
-- Returns: {1, matches} queued (matches: as pair.lua's, {} without the pairing arguments),
--   {0, prior ticket} the player already waits here (another search),
--   {2, ticket, enqueued ms} the search with this request key resumed (its ticket taken over)
-- include: matchmaking/bucket
-- include: matchmaking/pairing
local ticket, pid, player = ARGV[1], ARGV[2], ARGV[3]
local rating, now, lease, hard, ttl = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]),
  tonumber(ARGV[7]), tonumber(ARGV[8])
local rkey, owner = ARGV[9], ARGV[10]
sweep(now)
if rkey ~= '' then
  local known = redis.call('HGET', K, 'k|' .. rkey)
  if known then
    local raw = redis.call('HGET', T, known)
    if raw or redis.call('HEXISTS', R, known) == 1 then
      redis.call('HSET', K, 'o|' .. known, owner)
      local enq = now
      if raw then
        local khard = tonumber(string.match(raw, '^%d+|(%d+)|'))
        redis.call('ZADD', L, math.min(lease, khard), known)
        enq = tonumber(string.match(raw, '^(%d+)|'))
        touch(ttl, L)
      end
      touch(ttl, K)
      return {2, known, enq}
    end
  end
end
local prior = redis.call('HGET', W, pid)
if prior and redis.call('HEXISTS', T, prior) == 1 then return {0, prior} end
redis.call('ZADD', Q, rating, ticket)
redis.call('HSET', T, ticket, string.format('%d|%d|%s', now, hard, pid))
redis.call('ZADD', L, math.min(lease, hard), ticket)
redis.call('HSET', P, ticket, player)
redis.call('HSET', W, pid, ticket)
touch(ttl, Q, T, L, P, W)
if rkey ~= '' then
  redis.call('HSET', K, 'k|' .. rkey, ticket, 'r|' .. ticket, rkey, 'o|' .. ticket, owner)
  touch(ttl, K)
end
if #ARGV == 10 then return {1, {}} end
return {1, pair_bucket(now, tonumber(ARGV[11]), tonumber(ARGV[12]), tonumber(ARGV[13]), tonumber(ARGV[14]),
  tonumber(ARGV[15]), tonumber(ARGV[16]), tonumber(ARGV[17]), ttl, tonumber(ARGV[18]))}
