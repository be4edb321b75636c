-- Commit one action of a game against the version it was judged on, atomically: a repeated
-- request id gets the first answer (and the digest of the request it answered), another version
-- is a conflict; else the new state, its events (each with the status after the move), the kept
-- answer, the recorded action and the wake-up (a GameEventBatch on the game's channel).
-- The kept answers live in the state hash (fields 'r:<request id>' and 'r:<request id>#'): read by
-- the state's HMGET and written by its HSET, no key of their own. The recorded action goes into
-- the event stream (field 'a' of the move's first entry; a move without events gets an entry
-- <version>-0 with only 'a'): the record is read from there (kit/redis/game_reads.py).
-- With the optional keys the same script arms the turn clock (one round trip a move): the clock
-- keys are gateway/clocks.py's and are written only by arm() from clocks/arm_function; `meta`
-- (gateway/games.py's metadata key, named by the store, never by the caller) gets the clock's TTL
-- when keepmeta is 1, refreshed with the clock key's (see clocks/arm_function). No other key is
-- touched.
-- TTLs: the game's keys (state, events) get `ttl` at its first move and at its end (the finished
-- TTL), and in between only when the state key has less than 15/16 of `ttl` left (one PTTL,
-- instead of an EXPIRE on each key every move): after any move every key of the game has at least
-- 15/16 of `ttl` left and never more than `ttl`. Both are refreshed together, so the state key's
-- TTL stands for the events'.
-- Numbers reach Redis as the caller wrote them (`next`, `due`): a Lua number written to Redis is
-- formatted with printf's %.14g, ~0.3 us each, several a move. The answer's deadline field comes
-- encoded (`stamp`, for the deadline `due` the caller expects: now + per-move time); the Lua
-- encoder below only runs for another deadline (a simultaneous round keeping its deadline).
-- KEYS: state events [clock clocks meta]
-- ARGV: version next request state response over ttl channel publish action status digest window game toact permove now clockttl keepmeta due stamp ...
-- (... = the events as event id, GameEvent pairs; `next` is version + 1; game..stamp are '' without the clock keys)
-- Returns: {0, deadline ms when the clock keys were given} committed | {1, first answer, its digest}
--   replayed | {2, current version} conflict | {3} no such game
-- include: clocks/arm_function

-- A google.protobuf.Timestamp field (tag byte given) from milliseconds since the epoch.
local function pb_varint(n)
  local out = {}
  repeat
    local b = n % 128
    n = (n - b) / 128
    if n > 0 then b = b + 128 end
    out[#out + 1] = string.char(b)
  until n == 0
  return table.concat(out)
end

local function pb_timestamp_field(tag, ms)
  local nanos = (ms % 1000) * 1000000
  local inner = string.char(8) .. pb_varint((ms - ms % 1000) / 1000)
  if nanos > 0 then inner = inner .. string.char(16) .. pb_varint(nanos) end
  return string.char(tag) .. pb_varint(#inner) .. inner
end

local FIXED = 21
local field = 'r:' .. ARGV[3]
local cur = redis.call('HMGET', KEYS[1], 'v', 'l', field, field .. '#')
if cur[3] then return {1, cur[3], cur[4] or ''} end
local v = cur[1]
if not v then return {3} end
if tonumber(v) ~= tonumber(ARGV[1]) then return {2, v} end
local version = ARGV[2]
local last = cur[2]
local first = FIXED + 1
if #ARGV > FIXED then
  last = ARGV[first]
  redis.call('XADD', KEYS[2], last, 'e', ARGV[first + 1], 't', ARGV[11], 'a', ARGV[10])
  first = first + 2
else
  redis.call('XADD', KEYS[2], version .. '-0', 'a', ARGV[10])
end
for i = first, #ARGV - 1, 2 do
  last = ARGV[i]
  redis.call('XADD', KEYS[2], last, 'e', ARGV[i + 1], 't', ARGV[11])
end
local answer = ARGV[5]
local reply = {0}
if #KEYS == 5 then
  local clockttl = tonumber(ARGV[18])
  local armed = arm(KEYS[3], KEYS[4], ARGV[14], version, ARGV[15], ARGV[16], ARGV[17], clockttl)
  local due = armed[2]
  -- The kept answer gets the deadline armed with it (ApplyMoveResponse.turn_deadline, appended
  -- as an encoded field: protobuf merges concatenated messages), so a retry that comes after
  -- the game moved on (the clock no longer holds this version) is answered with it too.
  if due == ARGV[20] then
    answer = answer .. ARGV[21]
  elseif tonumber(due) > 0 then
    answer = answer .. pb_timestamp_field(42, tonumber(due))
  end
  if ARGV[19] == '1' and armed[3] == 1 then redis.call('EXPIRE', KEYS[5], clockttl) end
  reply = {0, due}
end
redis.call('HSET', KEYS[1], 'v', version, 's', ARGV[4], 'l', last, 'f', ARGV[6], 'w', ARGV[13],
           field, answer, field .. '#', ARGV[12])
local ttl = ARGV[7]
if version == '1' or ARGV[6] == '1' or redis.call('PTTL', KEYS[1]) < tonumber(ttl) * 1000 * 15 / 16 then
  redis.call('EXPIRE', KEYS[1], ttl)
  redis.call('EXPIRE', KEYS[2], ttl)
end
-- The game's channel is in this slot: SPUBLISH on a Redis 7 cluster (kit/redis/scripts.py).
if #ARGV > FIXED then redis.call(SHARD_PUBLISH, ARGV[8], ARGV[9]) end
return reply
