-- Move a challenge from one status to another, only if it is in the expected one (two players
-- accepting an open challenge at once, an answer racing the expiry: one wins).
-- KEYS: challenge
-- ARGV: expected status challenge_bytes ttl_s
-- (status: "pending", "starting", "accepted", "declined", "cancelled", "expired"; the challenge's
-- protobuf bytes as they are to be; ttl_s: how long the challenge is kept from now)
-- Returns: 1 moved, 0 it was not in the expected status, -1 no such challenge
local now = redis.call('HGET', KEYS[1], 's')
if not now then return -1 end
if now ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 's', ARGV[2], 'p', ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 1
