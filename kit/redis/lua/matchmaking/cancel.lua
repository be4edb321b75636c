-- Withdraw a queued ticket, unless another owner holds it now (a resent search took it over).
-- KEYS: queue tickets leases players owners results matches gc requests
-- ARGV: ticket owner
-- Returns: {1} removed from the queue, {2, "gid|seat"} already paired, {0} unknown,
--   {3} held by another owner now: left alone (owner "" = whoever holds it)
-- include: matchmaking/bucket
local t = ARGV[1]
local holder = redis.call('HGET', K, 'o|' .. t)
if ARGV[2] and ARGV[2] ~= '' and holder and holder ~= ARGV[2] then return {3} end
if redis.call('HEXISTS', T, t) == 1 then
  remove_ticket(t, false)
  return {1}
end
local r = redis.call('HGET', R, t)
if r then return {2, r} end
return {0}
