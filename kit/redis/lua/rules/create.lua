-- Write a new game at version 0: its state, its first events (GameCreated first, each with the
-- status at version 0), the creating request's answer, and the wake-up. A repeated creation with
-- the same request id gets the first answer; any other creation of an existing game is refused.
-- The game keeps its requests' answers in its state hash (fields 'r:<request id>': lua/rules/commit);
-- 'q' = 1 is part of layout 1 (every game has it; nothing reads it). 'z' is the seed the game was
-- made with, kept for take-backs, which replay the recorded actions from new_game (services/host/
-- replay.py); games made before it was kept have none and replay from seed 0, which the service
-- checks against the game's state before it takes anything back.
-- KEYS: state events
-- ARGV: request state game seats options last response ttl channel publish status window seed ...
-- (... = the events as event id, GameEvent pairs; `last` is the last of their ids)
-- Returns: {0} created | {1, first answer} replayed | {2} the game exists
local field = 'r:' .. ARGV[1]
local c = redis.call('HMGET', KEYS[1], 'c', field)
if c[1] then
  if ARGV[1] ~= '' and c[1] == ARGV[1] then return {1, c[2] or ''} end
  return {2}
end
if ARGV[1] ~= '' then
  redis.call('HSET', KEYS[1], 'v', 0, 's', ARGV[2], 'g', ARGV[3], 'n', ARGV[4], 'o', ARGV[5],
             'l', ARGV[6], 'c', ARGV[1], 'f', 0, 'w', ARGV[12], 'q', 1, 'z', ARGV[13], field, ARGV[7])
else
  redis.call('HSET', KEYS[1], 'v', 0, 's', ARGV[2], 'g', ARGV[3], 'n', ARGV[4], 'o', ARGV[5],
             'l', ARGV[6], 'c', ARGV[1], 'f', 0, 'w', ARGV[12], 'q', 1, 'z', ARGV[13])
end
for i = 14, #ARGV - 1, 2 do
  redis.call('XADD', KEYS[2], ARGV[i], 'e', ARGV[i + 1], 't', ARGV[11])
end
local ttl = ARGV[8]
redis.call('EXPIRE', KEYS[1], ttl)
redis.call('EXPIRE', KEYS[2], ttl)
redis.call(SHARD_PUBLISH, ARGV[9], ARGV[10])  -- the game's channel: this slot (kit/redis/scripts.py)
return {0}
