-- Claim mails to send (or player ids whose digest to look at): each due member gets a lease (its
-- score moves to the lease's end in `claimed`, which may be the same zset), and claims whose lease
-- ran out are taken again, so a sender that died mid-send leaves its mails to another.
-- KEYS: due claimed
-- ARGV: now lease_ms batch
-- Returns: {claimed members, the earliest score left in due ('' none), the earliest lease end ('' none)}
local now, lease, left = tonumber(ARGV[1]), tonumber(ARGV[1]) + tonumber(ARGV[2]), tonumber(ARGV[3])
local out = {}
local function take(k)
  local due = redis.call('ZRANGEBYSCORE', k, '-inf', now, 'LIMIT', 0, left)
  for _, m in ipairs(due) do
    redis.call('ZREM', k, m)
    redis.call('ZADD', KEYS[2], lease, m)
    table.insert(out, m)
  end
  left = left - #due
end
if KEYS[1] ~= KEYS[2] then take(KEYS[2]) end
if left > 0 then take(KEYS[1]) end
local d = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2]
local c = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')[2]
return {out, d or '', c or ''}
