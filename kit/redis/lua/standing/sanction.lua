-- Change a player's sanctions in force: add one, or lift one; entries no longer in force leave.
-- KEYS: sanctions
-- (sanctions: hash player id -> JSON list of the sanctions in force)
-- ARGV: player_id now_ms op payload
-- (op "add": payload is the sanction's JSON; op "lift": payload is the sanction id)
-- Returns: 1 changed, 0 nothing to lift (no sanction in force with that id)
local raw = redis.call('HGET', KEYS[1], ARGV[1])
local list = {}
if raw then list = cjson.decode(raw) end
local now = tonumber(ARGV[2])
local kept = {}
local found = 0
for _, s in ipairs(list) do
  local live = (s.lifted_ms == 0) and (s.ends_ms == 0 or s.ends_ms > now)
  if ARGV[3] == 'lift' and s.sanction_id == ARGV[4] and live then
    found = 1
  elseif live then
    table.insert(kept, s)
  end
end
if ARGV[3] == 'add' then
  table.insert(kept, cjson.decode(ARGV[4]))
  found = 1
end
if #kept == 0 then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(kept))
end
return found
