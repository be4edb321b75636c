-- Start a game in the gateway's books: write its metadata once (a retried start finds it and
-- changes nothing) and arm its first turn clock in the same script, so a started game is never
-- left without a clock (two separate writes did that when the second was refused during a Redis
-- Cluster failover: tools/cluster_failover.py --games). The metadata and the clock share the
-- game's shard tag, so this is one slot. On one Redis (which checks no slots) the caller also
-- passes the live lists the game joins (the lists' keys, after the clock's): a game whose metadata
-- this call wrote is listed at its creation time in the same script, a round trip fewer a game
-- (a retried start, which found the metadata, lists nothing: its caller lists the stored game).
-- KEYS: meta clock clocks ...
-- ARGV: game players options permove rated origin created ttl gid version toact clockpermove now clockttl
-- Returns: {1 metadata written | 0 it was there already, 1 armed | 0 not, deadline ms ('0' over, '-1' stale)}
-- include: clocks/arm_function
local written = 0
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'g', ARGV[1], 'p', ARGV[2], 'o', ARGV[3], 't', ARGV[4], 'r', ARGV[5],
             'src', ARGV[6], 'c', ARGV[7])
  written = 1
  for i = 4, #KEYS do redis.call('ZADD', KEYS[i], ARGV[7], ARGV[9]) end
end
local r = arm(KEYS[2], KEYS[3], ARGV[9], ARGV[10], ARGV[11], ARGV[12], ARGV[13], tonumber(ARGV[14]))
-- As clocks/arm: the metadata lives as long as the game's clock (one EXPIRE: the clock's TTL when
-- the arming refreshed it, else the game's own).
if r[3] == 1 then
  redis.call('EXPIRE', KEYS[1], tonumber(ARGV[14]))
elseif written == 1 then
  redis.call('EXPIRE', KEYS[1], tonumber(ARGV[8]))
end
return {written, r[1], r[2]}
