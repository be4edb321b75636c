-- Apply one finished game to a rating pool, once: nothing when its applied marker exists; -1 when
-- a player's stored rating is no longer the one the new ratings were computed from (the caller
-- reads again and computes again); else every seat's new rating, the leaderboards and the marker.
-- Per seat, from ARGV[4], seven arguments: player id, the stored rating read ("" = none), the new
-- rating, the board score, listed (0 guest: unlisted, 1 provisional: "all" only, 2 established:
-- "all" and "board"), username, the point for the seat's rating history ("<ended ms> <rating>
-- <game id>"; "" = none). Beyond the five keys, one history list per seat (the pool's
-- history:<player id>), in seat order: the newest HISTORY_KEEP points are kept.
-- KEYS: applied ratings board all names ...
-- ARGV: applied_ttl_s seats ended_ms ...
-- Returns: 1 applied, 0 applied before, -1 a rating moved meanwhile
local HISTORY_KEEP = 100
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local n = tonumber(ARGV[2])
for i = 0, n - 1 do
  local b = 4 + i * 7
  local current = redis.call('HGET', KEYS[2], ARGV[b]) or ''
  if current ~= ARGV[b + 1] then return -1 end
end
for i = 0, n - 1 do
  local b = 4 + i * 7
  local id = ARGV[b]
  redis.call('HSET', KEYS[2], id, ARGV[b + 2])
  local listed = ARGV[b + 4]
  if listed == '0' then
    redis.call('ZREM', KEYS[3], id)
    redis.call('ZREM', KEYS[4], id)
  else
    redis.call('ZADD', KEYS[4], ARGV[b + 3], id)
    if listed == '2' then
      redis.call('ZADD', KEYS[3], ARGV[b + 3], id)
    else
      redis.call('ZREM', KEYS[3], id)
    end
    redis.call('HSET', KEYS[5], id, ARGV[b + 5])
  end
  if ARGV[b + 6] ~= '' then
    redis.call('RPUSH', KEYS[6 + i], ARGV[b + 6])
    redis.call('LTRIM', KEYS[6 + i], -HISTORY_KEEP, -1)
  end
end
redis.call('SET', KEYS[1], ARGV[3], 'EX', tonumber(ARGV[1]))
return 1
