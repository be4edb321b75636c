-- A match's tickets, whether it started, and its players.
-- KEYS: queue tickets leases players owners results matches gc requests
-- ARGV: game_id
-- Returns: {tickets csv in seat order, started flag, player bytes in seat order...}, {} unknown
-- include: matchmaking/bucket
local gid = ARGV[1]
local ts = redis.call('HGET', M, gid)
if not ts then return {} end
local out = {ts, redis.call('HGET', M, gid .. '|s') or '0'}
for t in string.gmatch(ts, '[^,]+') do out[#out + 1] = redis.call('HGET', P, t) or '' end
return out
