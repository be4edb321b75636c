"""Turn clocks in Redis: the key schema and the Lua that arms a deadline, shared by the gateway
(which sweeps due deadlines and arms after its own actions) and the rules store (which arms in
the same script that commits a move when the caller asks, saving the caller a round trip).

- ``tafel:{g:ID}:clock`` hash: ``v`` the version the deadline belongs to, ``d`` the deadline (ms since
  the epoch, 0 once over), ``a`` the seats to act (comma-separated), ``m`` its member in the set below.
- ``tafel:clocks`` sorted set: member ``<game id>|<version>|<seats>``, score the deadline in ms.

Arming never lets an older version overwrite a newer one; the previous deadline leaves the set.
A new turn gets ``now + per-move time``; when the seats to act are a proper subset of those
before (a simultaneous round still being filled in) the round keeps its deadline.
"""

from __future__ import annotations

CLOCKS_KEY = "tafel:clocks"


def clock_key(game_id: str) -> str:
    return f"tafel:{{g:{game_id}}}:clock"


# arm(clock key, clocks zset, game id, version, seats to act csv, per-move ms, now ms, ttl s)
# -> {1 armed | 0 not (an equal or newer version is armed), deadline ms ('0' over, '-1' stale)}
ARM_FUNCTION = """
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
"""
