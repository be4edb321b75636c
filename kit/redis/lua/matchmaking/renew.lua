-- Renew the leases of a process's waiting tickets and say what became of each. A ticket given as
-- "<ticket>|<owner>" (its stream) is first checked to be that stream's still: another search of
-- the player took it over (on any gateway) and the older stream must end, not hear of the match too.
-- KEYS: queue tickets leases players owners results matches gc requests
-- ARGV: now_ms lease_until_ms keys_ttl_ms ticket ...
-- Returns: per ticket "q" queued (lease renewed), "m|gid|seat|started" paired (started: 1, 0,
--   or f when the rules service refused the game), "x" gone (expired), "t" taken over (not renewed)
-- include: matchmaking/bucket
local now, lease, ttl = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
sweep(now)
local out, renewed = {}, false
for i = 4, #ARGV do
  local t, owner = string.match(ARGV[i], '^([^|]*)|?(.*)$')
  local holder = owner ~= '' and redis.call('HGET', K, 'o|' .. t)
  local raw = redis.call('HGET', T, t)
  if holder and holder ~= owner then
    out[#out + 1] = 't'
  elseif raw then
    local hard = tonumber(string.match(raw, '^%d+|(%d+)|'))
    redis.call('ZADD', L, math.min(lease, hard), t)
    renewed = true
    out[#out + 1] = 'q'
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
return out
