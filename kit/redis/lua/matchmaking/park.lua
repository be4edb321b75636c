-- A correspondence search's stream ended without a withdrawal (a lost connection, a closed page,
-- a stopping gateway): its ticket stays queued, unowned, until its hard expiry (a week from when
-- it queued), paired by the next search in its bucket, taken over by the player's next search, or
-- withdrawn (CancelSearch: cancel.lua with no owner). Guarded by the stream's owner like cancel:
-- a ticket another search holds now is left alone. The owner becomes "" so a late withdrawal or
-- renewal by the old stream leaves it alone too. Every key of the ticket lives past its expiry.
-- KEYS: queue tickets leases players owners results matches gc requests
-- ARGV: ticket owner now_ms keys_ttl_ms
-- Returns: {1, hard expiry ms} parked, {2, "gid|seat"} already paired, {0} unknown or expired,
--   {3} held by another owner now: left alone
-- include: matchmaking/bucket
local t, now, ttl = ARGV[1], tonumber(ARGV[3]), tonumber(ARGV[4])
local holder = redis.call('HGET', K, 'o|' .. t)
if ARGV[2] ~= '' and holder and holder ~= ARGV[2] then return {3} end
local raw = redis.call('HGET', T, t)
if raw then
  local hard = tonumber(string.match(raw, '^%d+|(%d+)|'))
  if hard <= now then
    remove_ticket(t, false)
    return {0}
  end
  redis.call('ZADD', L, hard, t)
  redis.call('HSET', K, 'o|' .. t, '')
  touch(ttl, Q, T, L, P, W, K)
  return {1, hard}
end
local r = redis.call('HGET', R, t)
if r then return {2, r} end
return {0}
