-- Mark notices read: the ids given that are unread (others, and ids no longer kept, are ignored), or
-- every unread one; when any changed, an InboxChanged event (those ids or all_read, the unread
-- count) goes on the account's event stream in the same step.
-- KEYS: notices order unread read events
-- ARGV: prefix events_max events_keep_s wake every ...
-- (prefix: an AccountEvent with only its time; every: "1" all, "0" the ids that follow)
-- Returns: the unread count after it
-- include: notices/inbox
local every = ARGV[5] == '1'
local ids = {}
if every then
  local flat = redis.call('ZRANGE', KEYS[3], 0, -1, 'WITHSCORES')
  for i = 1, #flat, 2 do
    redis.call('ZADD', KEYS[4], flat[i + 1], flat[i])
    ids[#ids + 1] = flat[i]
  end
  if #ids > 0 then redis.call('DEL', KEYS[3]) end
else
  for i = 6, #ARGV do
    local place = redis.call('ZSCORE', KEYS[3], ARGV[i])
    if place then
      redis.call('ZREM', KEYS[3], ARGV[i])
      redis.call('ZADD', KEYS[4], place, ARGV[i])
      ids[#ids + 1] = ARGV[i]
    end
  end
end
local unread = redis.call('ZCARD', KEYS[3])
if #ids == 0 then return unread end
local ttl = redis.call('PTTL', KEYS[2])
if ttl > 0 then redis.call('PEXPIRE', KEYS[4], ttl) end
if every then ids = {} end
post(KEYS[5], changed(ARGV[1], unread, ids, {}, every, false), ARGV[2], ARGV[3], ARGV[4])
return unread
