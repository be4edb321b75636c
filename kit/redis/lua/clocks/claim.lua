-- Claim due deadlines for this sweeper: each moves from a shard's clocks zset to that shard's
-- claimed zset with a lease (score: the lease's end); claims whose lease ran out are taken again.
-- Takes (clocks, claimed) pairs: one shard's on a Redis Cluster (one slot a script), every shard's
-- in one call on a single Redis (which does not check slots), so a single-Redis sweep is one script.
-- At most `batch` members in all; the next deadline and lease end are the earliest over the pairs.
-- KEYS: clocks claimed ...
-- ARGV: now lease batch
-- Returns: {claimed members, the next deadline ('' none), the next lease end ('' none)}
local now = tonumber(ARGV[1])
local lease = now + tonumber(ARGV[2])
local left = tonumber(ARGV[3])
local out = {}
local nxt, nxt_claim
-- The earliest of a zset ('' none), after taking what is due from it: one ZRANGE for a shard with
-- nothing due (most of them on most sweeps), so a sweep of every shard stays cheap.
local function earliest(k)
  return redis.call('ZRANGE', k, 0, 0, 'WITHSCORES')[2]
end
local function sooner(a, b)
  if a and (not b or tonumber(a) < tonumber(b)) then return a end
  return b
end
for i = 1, #KEYS - 1, 2 do
  local zk, ck = KEYS[i], KEYS[i + 1]
  local d = earliest(zk)
  if d and left > 0 and tonumber(d) <= now then
    local due = redis.call('ZRANGEBYSCORE', zk, '-inf', now, 'LIMIT', 0, left)
    for _, m in ipairs(due) do
      redis.call('ZREM', zk, m)
      redis.call('ZADD', ck, lease, m)
      table.insert(out, m)
    end
    left = left - #due
    d = earliest(zk)
  end
  local c = earliest(ck)
  if c and left > 0 and tonumber(c) <= now then
    local lapsed = redis.call('ZRANGEBYSCORE', ck, '-inf', now, 'LIMIT', 0, left)
    for _, m in ipairs(lapsed) do
      redis.call('ZADD', ck, lease, m)
      table.insert(out, m)
    end
    left = left - #lapsed
    c = earliest(ck)
  end
  nxt = sooner(d, nxt)
  nxt_claim = sooner(c, nxt_claim)
end
return {out, nxt or '', nxt_claim or ''}
