-- A private room's keys and what every room script shares. Included (-- include: rooms/room) by
-- every script here, whose KEYS are the room's three keys (kit/redis/keys.py room_keys):
-- META hash g game, o GameOptions bytes, pm per-move ms, h host id, hb host Player bytes, n seats,
--   mn minimum seats, s state (open | starting | started | closed), gid the game id once
--   starting, x expiry (ms since the epoch), v version (bumped on every change), c created ms,
--   w watchable (1/0)
-- SEATS list: player ids in joining order (= seat order); WHO hash: player id -> Player bytes.
-- snapshot() is what every script answers with; changed() bumps the version and publishes the code.
-- Defines: META SEATS WHO, snapshot(), expire_at(ms), changed(channel, code)
local META, SEATS, WHO = KEYS[1], KEYS[2], KEYS[3]
local function snapshot()
  local meta = redis.call('HGETALL', META)
  local ids = redis.call('LRANGE', SEATS, 0, -1)
  local players = {}
  for i, pid in ipairs(ids) do players[i] = redis.call('HGET', WHO, pid) or '' end
  return {meta, players}
end
local function expire_at(ms)
  for i = 1, #KEYS do redis.call('PEXPIREAT', KEYS[i], ms) end
end
local function changed(channel, code)
  redis.call('HINCRBY', META, 'v', 1)
  -- Plain PUBLISH everywhere: the rooms' channel is global (not this room's slot, which Redis 7
  -- refuses for a script's SPUBLISH); a cluster broadcasts it (docs/cluster.md, pub/sub).
  redis.call('PUBLISH', channel, code)
end
