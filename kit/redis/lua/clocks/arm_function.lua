-- arm(): set a game's turn deadline. Included (-- include: clocks/arm_function) by clocks/arm,
-- the gateway's own arming, and by rules/commit, which arms in the same script as the move (one
-- round trip a move). The clock keys are gateway/clocks.py's (kit/redis/keys.py, "Turn clocks"):
-- this function is the only Lua that arms them, so their layout lives in one place (clocks/extend
-- only moves a correspondence turn's standing deadline, a vacation's: gateway/correspondence.py).
-- An older version never overwrites a newer one; the previous deadline leaves the zset. A new turn
-- gets now + per-move time; when the seats to act are a proper subset of those before (a
-- simultaneous round still being filled in) the round keeps its deadline.
-- The clock key's TTL is refreshed when a sixteenth of it has passed since the last refresh
-- (field 'x', ms), not on every move: after any arming at least 15/16 of `ttl` is left, never more
-- than `ttl`. The game's end always refreshes.
-- The game's end (no seat to act) arms a seatless *finalise* deadline FINALISE_MS away: the
-- process that committed the end writes the game's record and takes the game off the live lists,
-- then removes it (gateway/clocks.py Clocks.finish: a ZREM of this member); if that process dies first, the deadline comes due and any
-- gateway's sweeper finishes the game (gateway/actions.py on_due), so an ended game is never left
-- listed live without its record.
-- Defines: arm(clock, clocks, game, version, toact, permove, now, ttl)
-- Returns: {1 armed | 0 not (an equal or newer version is armed), deadline ms ('0' over, '-1' stale),
--   1 when the clock key's TTL was refreshed (its companions, e.g. the metadata key, follow) | 0}
local FINALISE_MS = 30000
local function arm(ck, zk, gid, version, toact, permove, now, ttl)
  local cur = redis.call('HMGET', ck, 'v', 'm', 'a', 'd', 'x')
  local v = cur[1]
  if v and tonumber(v) >= tonumber(version) then
    if tonumber(v) == tonumber(version) then return {0, cur[4] or '0', 0} end
    return {0, '-1', 0}
  end
  local old = cur[2]
  if old and old ~= '' then redis.call('ZREM', zk, old) end
  local at = tonumber(now)
  if toact == '' then
    local finalise = gid .. '|' .. version .. '|'
    redis.call('ZADD', zk, at + FINALISE_MS, finalise)
    redis.call('HSET', ck, 'v', version, 'd', 0, 'a', '', 'm', finalise, 'x', at)
    redis.call('EXPIRE', ck, ttl)
    return {1, '0', 1}
  end
  local deadline = at + tonumber(permove)
  local due = nil  -- the deadline as Redis keeps it: a string, not a Lua number to format
  local olda = cur[3]
  local oldd = tonumber(cur[4] or '0')
  -- Only a round of several seats can keep its deadline (a proper subset of one seat is none).
  if olda and oldd > 0 and string.find(olda, ',', 1, true) then
    local before = {}
    local nbefore = 0
    for s in string.gmatch(olda, '[^,]+') do before[s] = true; nbefore = nbefore + 1 end
    local subset = true
    local nnow = 0
    for s in string.gmatch(toact, '[^,]+') do
      nnow = nnow + 1
      if not before[s] then subset = false end
    end
    if subset and nnow < nbefore then deadline, due = oldd, cur[4] end
  end
  due = due or string.format('%d', deadline)
  local member = gid .. '|' .. version .. '|' .. toact
  redis.call('ZADD', zk, due, member)
  local refreshed = cur[5]
  if refreshed and at >= tonumber(refreshed) and at - tonumber(refreshed) < ttl * 1000 / 16 then
    redis.call('HSET', ck, 'v', version, 'd', due, 'a', toact, 'm', member)
    return {1, due, 0}
  end
  redis.call('HSET', ck, 'v', version, 'd', due, 'a', toact, 'm', member, 'x', now)
  redis.call('EXPIRE', ck, ttl)
  return {1, due, 1}
end
