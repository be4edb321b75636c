-- A gateway's hub registers as a listener of a game (kit/redis/keys.py GameKeys.listeners) before
-- its watchers read the game's stream: from then on lua/rules/commit publishes every action another
-- gateway routes. The set expires with the game's state (its TTL copied; `ttl` seconds when the
-- state has none yet), and lua/rules/commit refreshes both together.
-- KEYS: listeners state
-- ARGV: listener ttl
-- Returns: 1 added, 0 already there
local added = redis.call('SADD', KEYS[1], ARGV[1])
local left = redis.call('PTTL', KEYS[2])
if left > 0 then
  redis.call('PEXPIRE', KEYS[1], left)
else
  redis.call('EXPIRE', KEYS[1], ARGV[2])
end
return added
