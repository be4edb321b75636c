-- Write a game's metadata once: a retried start finds it and changes nothing.
-- KEYS: meta
-- ARGV: game players options permove rated origin created ttl
-- Returns: 1 written, 0 it was there already
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'g', ARGV[1], 'p', ARGV[2], 'o', ARGV[3], 't', ARGV[4], 'r', ARGV[5],
           'src', ARGV[6], 'c', ARGV[7])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[8]))
return 1
