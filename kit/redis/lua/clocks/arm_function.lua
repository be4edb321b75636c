-- arm(): set a game's turn deadline. Included (-- include: clocks/arm_function) by clocks/arm,
-- the gateway's own arming, and by rules/commit, which arms in the same script as the move (one
-- round trip a move). The clock keys are gateway/clocks.py's (kit/redis/keys.py, "Turn clocks"):
-- this function is the only Lua that writes them, so their layout lives in one place.
-- An older version never overwrites a newer one; the previous deadline leaves the zset. A new turn
-- gets now + per-move time; when the seats to act are a proper subset of those before (a
-- simultaneous round still being filled in) the round keeps its deadline.
-- Defines: arm(clock, clocks, game, version, toact, permove, now, ttl)
-- Returns: {1 armed | 0 not (an equal or newer version is armed), deadline ms ('0' over, '-1' stale)}
local function arm(ck, zk, gid, version, toact, permove, now, ttl)
  local v = redis.call('HGET', ck, 'v')
  if v and tonumber(v) >= tonumber(version) then
    if tonumber(v) == tonumber(version) then return {0, redis.call('HGET', ck, 'd') or '0'} end
    return {0, '-1'}
  end
  local old = redis.call('HGET', ck, 'm')
  if old and old ~= '' then redis.call('ZREM', zk, old) end
  if toact == '' then
    redis.call('HSET', ck, 'v', version, 'd', 0, 'a', '', 'm', '')
    redis.call('EXPIRE', ck, ttl)
    return {1, '0'}
  end
  local deadline = tonumber(now) + tonumber(permove)
  local olda = redis.call('HGET', ck, 'a')
  local oldd = tonumber(redis.call('HGET', ck, 'd') or '0')
  if olda and olda ~= '' and oldd > 0 then
    local before = {}
    local nbefore = 0
    for s in string.gmatch(olda, '[^,]+') do before[s] = true; nbefore = nbefore + 1 end
    local subset = true
    local nnow = 0
    for s in string.gmatch(toact, '[^,]+') do
      nnow = nnow + 1
      if not before[s] then subset = false end
    end
    if subset and nnow < nbefore then deadline = oldd end
  end
  local member = gid .. '|' .. version .. '|' .. toact
  redis.call('ZADD', zk, deadline, member)
  redis.call('HSET', ck, 'v', version, 'd', deadline, 'a', toact, 'm', member)
  redis.call('EXPIRE', ck, ttl)
  return {1, tostring(deadline)}
end
