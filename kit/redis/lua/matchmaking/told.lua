-- A search told its player the match of `ticket`: the ticket is no longer the player's in this
-- bucket (bucket.lua, told), so their next search queues afresh instead of attaching to it. On one
-- Redis (which checks no slots) the search's claim on the game (claims.py) is released in the same
-- call, if it still holds it.
-- KEYS: queue tickets leases players owners results matches gc requests [claim]
-- ARGV: ticket [token]
-- Returns: 1
-- include: matchmaking/bucket
told(ARGV[1])
if KEYS[10] and redis.call('GET', KEYS[10]) == ARGV[2] then redis.call('DEL', KEYS[10]) end
return 1
