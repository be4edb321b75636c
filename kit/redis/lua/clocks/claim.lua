-- Claim due deadlines for this sweeper: each moves from the clocks zset to the claimed zset with a
-- lease (score: the lease's end); claims whose lease ran out are taken again.
-- KEYS: clocks claimed
-- ARGV: now lease batch
-- Returns: {claimed members, the next deadline ('' none), the next lease end ('' none)}
local now = tonumber(ARGV[1])
local lease = now + tonumber(ARGV[2])
local out = {}
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))
for _, m in ipairs(due) do
  redis.call('ZREM', KEYS[1], m)
  redis.call('ZADD', KEYS[2], lease, m)
  table.insert(out, m)
end
local lapsed = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))
for _, m in ipairs(lapsed) do
  redis.call('ZADD', KEYS[2], lease, m)
  table.insert(out, m)
end
local nxt = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local nxt_claim = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
return {out, nxt[2] or '', nxt_claim[2] or ''}
