-- Remove notices: the ids given that are kept (others are ignored), or every one; when any went, an
-- InboxChanged event (those ids or all_cleared, the unread count) goes on the account's event
-- stream in the same step.
-- KEYS: notices order unread read events
-- ARGV: prefix events_max events_keep_s wake every ...
-- (prefix: an AccountEvent with only its time; every: "1" all, "0" the ids that follow)
-- Returns: the unread count after it
-- include: notices/inbox
local every = ARGV[5] == '1'
local ids = {}
if every then
  if redis.call('ZCARD', KEYS[2]) == 0 then return 0 end
  redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
else
  for i = 6, #ARGV do
    if drop(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[i]) == 1 then ids[#ids + 1] = ARGV[i] end
  end
  if #ids == 0 then return redis.call('ZCARD', KEYS[3]) end
end
local unread = redis.call('ZCARD', KEYS[3])
post(KEYS[5], changed(ARGV[1], unread, {}, ids, false, every), ARGV[2], ARGV[3], ARGV[4])
return unread
