-- Replace notices that are still kept (an erased account's name in them): a notice cleared
-- meanwhile stays cleared.
-- KEYS: notices
-- ARGV: id note ...
-- (pairs of a notification id and its new Notification bytes)
-- Returns: how many were replaced
local n = 0
for i = 1, #ARGV, 2 do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 1 then
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
    n = n + 1
  end
end
return n
