-- Write an event stream (a tournament's, an account's: entries of one field e) again with some
-- entries changed (an erased account replaced), keeping every entry's id, only if nothing was added
-- since it was read.
-- KEYS: events
-- ARGV: last_id ...
-- (after last_id: id e pairs, every entry in order as it is to be)
-- Returns: 1 written, 0 the stream moved on (read it again)
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if #last == 0 or last[1][1] ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
for i = 2, #ARGV, 2 do redis.call('XADD', KEYS[1], ARGV[i], 'e', ARGV[i + 1]) end
return 1
