-- Claim in-flight requests whose lease ran out (no bot joined for them): each one's lease is
-- renewed to the claimant, whose settle names it, so two sweepers never decide on one request.
-- KEYS: inflight
-- ARGV: now_ms lease_ms limit
-- Returns: {entry, claimed lease end, ...}
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
local out = {}
local lease = tonumber(ARGV[1]) + tonumber(ARGV[2])
for _, entry in ipairs(due) do
  redis.call('ZADD', KEYS[1], lease, entry)
  out[#out + 1] = entry
  out[#out + 1] = tostring(lease)
end
return out
