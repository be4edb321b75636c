-- Renew the leases of a process's waiting tickets and say what became of each. A ticket given as
-- "<ticket>|<owner>" (its stream) is first checked to be that stream's still: another search of
-- the player took it over (on any gateway) and the older stream must end, not hear of the match too.
-- With `blocks` set (every few ticks), each queued ticket's block list is read again and stored
-- (bucket.lua, set_avoid), so a block made while both players wait keeps them apart from then on:
-- "k" (one Redis, which checks no slots) reads each ticket's player's blocks and blocked_by keys,
-- given after the bucket's in the tickets' order; "a" (a cluster: the caller read them) takes the
-- ids in each ticket's entry, "<ticket>|<owner>|<ids, comma-separated>".
-- KEYS: queue tickets leases players owners results matches gc requests ...
-- ARGV: now_ms lease_until_ms keys_ttl_ms blocks ticket ...
-- Returns: per ticket "q" queued (lease renewed), "m|gid|seat|started" paired (started: 1, 0,
--   or f when the rules service refused the game), "x" gone (expired), "t" taken over (not renewed)
-- include: matchmaking/bucket
local now, lease, ttl, blocks = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
sweep(now)
local out, renewed, keyed = {}, false, false
for i = 5, #ARGV do
  local t, owner, ids = string.match(ARGV[i], '^([^|]*)|?([^|]*)|?(.*)$')
  local holder = owner ~= '' and redis.call('HGET', K, 'o|' .. t)
  local raw = redis.call('HGET', T, t)
  if holder and holder ~= owner then
    out[#out + 1] = 't'
  elseif raw then
    local hard = tonumber(string.match(raw, '^%d+|(%d+)|'))
    redis.call('ZADD', L, math.min(lease, hard), t)
    renewed = true
    out[#out + 1] = 'q'
    if blocks == 'k' then
      local at = 10 + 2 * (i - 5)
      keyed = set_avoid(t, blocked_ids(KEYS[at], KEYS[at + 1])) or keyed
    elseif blocks == 'a' then
      keyed = set_avoid(t, split_ids(ids)) or keyed
    end
  else
    local r = redis.call('HGET', R, t)
    if r then
      local gid = string.match(r, '^([^|]+)|')
      local s = redis.call('HGET', M, gid .. '|s') or '0'
      out[#out + 1] = 'm|' .. r .. '|' .. s
    else
      out[#out + 1] = 'x'
    end
  end
end
if renewed then touch(ttl, L) end
if keyed then touch(ttl, K) end
return out
