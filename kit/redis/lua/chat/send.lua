-- Add a chat line to its channel once per request id: a request id seen before answers its first
-- line (read back from the channel: the request keeps only the id, so an erased author's name is
-- nowhere else; '' once trimmed away); else XADD (at most `maxlen` lines kept), remember the request a day, keep the lines as
-- long as their owner, and wake the channel's readers (the entry's id as payload).
-- KEYS: lines request owner
-- ARGV: line keep_ms maxlen wake
-- (line: the ChatMessage bytes, author and text; keep_ms > 0: the lines expire that long after
-- this one; 0: they take the owner key's expiry, none when it has none; owner may be lines itself)
-- Returns: {'NEW', id} or {'DUP', id, line}
local done = redis.call('HGET', KEYS[2], 'i')
if done then
  local entry = redis.call('XRANGE', KEYS[1], done, done)
  if #entry > 0 then return {'DUP', done, entry[1][2][2]} end
  return {'DUP', done, ''}
end
local id = redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[3], '*', 'm', ARGV[1])
redis.call('HSET', KEYS[2], 'i', id)
redis.call('EXPIRE', KEYS[2], 86400)
local keep = tonumber(ARGV[2])
if keep > 0 then
  redis.call('PEXPIRE', KEYS[1], keep)
else
  local ttl = redis.call('PTTL', KEYS[3])
  if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
end
redis.call(SHARD_PUBLISH, ARGV[4], id)
return {'NEW', id}
