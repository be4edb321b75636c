-- Write a stream of protobuf entries (a tournament's or an account's events: field e; a chat
-- channel: field m) again with some entries changed (an erased account replaced), keeping every
-- entry's id and the stream's expiry, only if nothing was added since it was read.
-- KEYS: events
-- ARGV: last_id field ...
-- (after field: id value pairs, every entry in order as it is to be)
-- Returns: 1 written, 0 the stream moved on (read it again)
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if #last == 0 or last[1][1] ~= ARGV[1] then return 0 end
local ttl = redis.call('PTTL', KEYS[1])
redis.call('DEL', KEYS[1])
for i = 3, #ARGV, 2 do redis.call('XADD', KEYS[1], ARGV[i], ARGV[2], ARGV[i + 1]) end
if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1
