-- Mark a match started (or refused for good) and wake the replicas waiting on its tickets. On one
-- Redis (which checks no slots) the caller also passes its seats' search claims (claims.py), each
-- released here if its search still holds it, before anyone can learn the match: a round trip
-- fewer a game than releasing them first (a cluster releases them apart: another slot). Guarded
-- (guard "1": KEYS[10] is the game's clock key), it is sent in the same write as the game's
-- games/start (GameDirectory.start_game's followed_by) and does nothing unless that start ran: the
-- clock exists only once games/start wrote the game (a NOSCRIPT answer to it must not let this
-- mark a game started that does not exist). `told`: the tickets (comma-separated) whose streams
-- the caller holds and tells now; the others stay their players' (bucket.lua, told) until a
-- stream of theirs tells them, so a player whose stream died attaches to the match by searching.
-- KEYS: queue tickets leases players owners results matches gc requests ...
-- ARGV: game_id channel payload mark guard told ...
-- Returns: 1 marked (and published; mark "1" started, "f" refused), 0 unknown match,
--   2 guarded and the game's clock is not there (nothing done)
-- include: matchmaking/bucket
local first = 10
if ARGV[5] == '1' then
  if redis.call('EXISTS', KEYS[10]) == 0 then return 2 end
  first = 11
end
for i = first, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[i - first + 7] then redis.call('DEL', KEYS[i]) end
end
for t in string.gmatch(ARGV[6], '[^,]+') do told(t) end
local gid = ARGV[1]
if redis.call('HEXISTS', M, gid) == 0 then return 0 end
if redis.call('HGET', M, gid .. '|s') == '1' then return 1 end
redis.call('HSET', M, gid .. '|s', ARGV[4])
-- Plain PUBLISH everywhere: the matched channel is global, not this bucket's slot (docs/cluster.md).
redis.call('PUBLISH', ARGV[2], ARGV[3])
return 1
