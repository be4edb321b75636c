-- The inbox's shared pieces (gateway/notices/store.py; keys: kit/redis/keys.py, "Notices"),
-- included (-- include: notices/inbox) by every notices script, each of which says what it writes.
-- post() appends an AccountEvent to the account's event stream exactly as gateway/events/feed.py
-- does (MAXLEN ~, the stream's expiry, a wake-up on its channel), so the event and the inbox change
-- are one write. changed() builds the AccountEvent{inbox: InboxChanged} bytes here, because only
-- the script knows the unread count and which ids really changed: `prefix` is the AccountEvent's
-- other fields (its time) as the caller serialised them; protobuf takes fields in any order.
-- drop() removes one notice from every inbox key.
-- Defines: varint(n), lenfield(tag, bytes), changed(prefix, unread, read_ids, cleared_ids, all_read, all_cleared),
--   post(events, payload, maxlen, keep_s, wake), drop(notices, order, unread, read, id)
-- Returns: changed() the event's bytes; drop() 1 removed | 0 not kept
local function varint(n)
  local out = {}
  repeat
    local b = n % 128
    n = (n - b) / 128
    if n > 0 then b = b + 128 end
    out[#out + 1] = string.char(b)
  until n == 0
  return table.concat(out)
end

local function lenfield(tag, bytes)
  return string.char(tag) .. varint(#bytes) .. bytes
end

local function changed(prefix, unread, read_ids, cleared_ids, all_read, all_cleared)
  local inner = {string.char(0x08) .. varint(unread)}
  for _, id in ipairs(read_ids) do inner[#inner + 1] = lenfield(0x12, id) end
  for _, id in ipairs(cleared_ids) do inner[#inner + 1] = lenfield(0x1a, id) end
  if all_read then inner[#inner + 1] = string.char(0x20, 1) end
  if all_cleared then inner[#inner + 1] = string.char(0x28, 1) end
  return prefix .. lenfield(0x42, table.concat(inner))
end

local function post(events, payload, maxlen, keep_s, wake)
  redis.call('XADD', events, 'MAXLEN', '~', maxlen, '*', 'e', payload)
  redis.call('EXPIRE', events, keep_s)
  redis.call(SHARD_PUBLISH, wake, '1')
end

local function drop(notices, order, unread, read, id)
  if redis.call('ZREM', order, id) == 0 then return 0 end
  redis.call('ZREM', unread, id)
  redis.call('ZREM', read, id)
  redis.call('HDEL', notices, id)
  return 1
end
