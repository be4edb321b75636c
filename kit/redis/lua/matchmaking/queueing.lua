-- Queueing a ticket, shared by enqueue and claim_enqueue. Included after matchmaking/bucket and
-- matchmaking/pairing, whose keys and helpers it uses. A search sent again with the same request
-- key takes over the ticket that search queued before (still queued, or paired: the caller learns
-- the match on renewal). One queued ticket per player per bucket, and the signed-in player is the
-- authority over it: another search of the player here (with another request id, or none, e.g.
-- after the gateway of the first died) takes that ticket over too, so whoever is paired with it
-- is paired with the search the player still waits on; and if it was paired before the player
-- was told (W still names it, pairing.lua), the new search answers with that match. With the
-- pairing arguments (pair.lua's, `pairing` nil without them), a new ticket is paired at once in
-- the same call. `avoid`: the ids the player blocks or is blocked by, read by this search (a
-- taken-over ticket gets the fresh list too; bucket.lua, set_avoid).
-- Defines: queue_ticket(ticket, pid, player, rating, now, lease, hard, ttl, rkey, owner, avoid, pairing): {1, matches} queued (matches as pair.lua's, {} without pairing), {2, ticket, enqueued ms} the search with this request key, or the player's queued (or paired, untold) ticket here, resumed (taken over by `owner`); writes Q T L P W K (and R M GC when it pairs)
local function take_over(t, raw, owner, now, lease, ttl, avoid)
  redis.call('HSET', K, 'o|' .. t, owner)
  local enq = now
  if raw then
    local khard = tonumber(string.match(raw, '^%d+|(%d+)|'))
    redis.call('ZADD', L, math.min(lease, khard), t)
    enq = tonumber(string.match(raw, '^(%d+)|'))
    set_avoid(t, avoid)
    touch(ttl, L)
  end
  touch(ttl, K)
  return {2, t, enq}
end

local function queue_ticket(ticket, pid, player, rating, now, lease, hard, ttl, rkey, owner, avoid, pairing)
  sweep(now)
  if rkey ~= '' then
    local known = redis.call('HGET', K, 'k|' .. rkey)
    if known then
      local raw = redis.call('HGET', T, known)
      if raw or redis.call('HEXISTS', R, known) == 1 then return take_over(known, raw, owner, now, lease, ttl, avoid) end
    end
  end
  local prior = redis.call('HGET', W, pid)
  if prior then
    local raw = redis.call('HGET', T, prior)
    if raw then return take_over(prior, raw, owner, now, lease, ttl, avoid) end
    -- Paired into a match no search of the player was told of (its stream died unanswered):
    -- this search answers with that match, unless the game was refused for good.
    local r = redis.call('HGET', R, prior)
    if r and redis.call('HGET', M, string.match(r, '^([^|]+)|') .. '|s') ~= 'f' then
      return take_over(prior, nil, owner, now, lease, ttl, avoid)
    end
  end
  redis.call('ZADD', Q, rating, ticket)
  redis.call('HSET', T, ticket, string.format('%d|%d|%s', now, hard, pid))
  redis.call('ZADD', L, math.min(lease, hard), ticket)
  redis.call('HSET', P, ticket, player)
  redis.call('HSET', W, pid, ticket)
  touch(ttl, Q, T, L, P, W)
  local keyed = false
  if #avoid > 0 then keyed = set_avoid(ticket, avoid) end
  if rkey ~= '' then
    redis.call('HSET', K, 'k|' .. rkey, ticket, 'r|' .. ticket, rkey, 'o|' .. ticket, owner)
    keyed = true
  end
  if keyed then touch(ttl, K) end
  if not pairing then return {1, {}} end
  return {1, pair_bucket(now, pairing[1], pairing[2], pairing[3], pairing[4], pairing[5], pairing[6], pairing[7],
    ttl, pairing[8])}
end
