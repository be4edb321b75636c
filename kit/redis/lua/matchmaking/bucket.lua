-- A matchmaking bucket's keys and the ticket bookkeeping every bucket script shares. Included
-- (-- include: matchmaking/bucket) by enqueue, cancel, renew, lookup, started and pair, whose
-- KEYS are always the bucket's nine keys in this order (kit/redis/keys.py bucket_keys().all()).
-- remove_ticket drops a ticket from the queue, its times, its lease and the player's entry (and,
-- unless keep_player, its Player bytes and request id); sweep removes tickets whose lease ran
-- out and the results of matches older than their keep time; touch keeps alive the keys a call
-- wrote to. A paired ticket stays the player's in W (K p|<ticket> names its player) until a search
-- of theirs was told the match (told) or the match's result is dropped: a new search of the
-- player attaches to that match instead of queueing afresh (their stream may have died unanswered).
-- Blocks: K a|<ticket> lists (",id,id,") the players the ticket's player must never share a table
-- with, either way round (set_avoid; absent for most tickets), kept to the players with a ticket
-- here when written: a player who queues later brings a list of their own, which names this one
-- (pairing checks both tickets' lists). K a# counts the lists, so a bucket where nobody blocks
-- anybody pays one read a pairing pass for them (listed), not one a ticket.
-- Defines: Q T L P W R M GC K, forget_request(ticket), told(ticket), remove_ticket(ticket, keep_player, unlisted), sweep(now), touch(ttl, key...), blocked_ids(blocks key, blocked-by key): {id...}, split_ids(csv): {id...}, set_avoid(ticket, {id...}): written (K a|<ticket>, a#; the caller touches K), listed(): any ticket has a list, avoid_set(ticket): {[id] = true} or false
local Q, T, L, P, W, R, M, GC, K = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9]

local function forget_request(t)
  local rk = redis.call('HGET', K, 'r|' .. t)
  if rk then redis.call('HDEL', K, 'k|' .. rk) end
  redis.call('HDEL', K, 'r|' .. t, 'o|' .. t)
end

local function told(t)
  local pid = redis.call('HGET', K, 'p|' .. t)
  if pid then
    if redis.call('HGET', W, pid) == t then redis.call('HDEL', W, pid) end
    redis.call('HDEL', K, 'p|' .. t)
  end
end

local function drop_avoid(t)
  if redis.call('HDEL', K, 'a|' .. t) == 1 and redis.call('HINCRBY', K, 'a#', -1) <= 0 then
    redis.call('HDEL', K, 'a#')
  end
end

-- unlisted: the caller knows the ticket has no block list (pairing read it): a command fewer.
local function remove_ticket(t, keep_player, unlisted)
  local raw = redis.call('HGET', T, t)
  if raw then
    local pid = string.match(raw, '^%d+|%d+|(.*)$')
    if pid and redis.call('HGET', W, pid) == t then redis.call('HDEL', W, pid) end
  end
  redis.call('ZREM', Q, t)
  redis.call('HDEL', T, t)
  redis.call('ZREM', L, t)
  if not unlisted then drop_avoid(t) end
  if not keep_player then
    redis.call('HDEL', P, t)
    forget_request(t)
  end
end

local function sweep(now)
  local gone = redis.call('ZRANGEBYSCORE', L, '-inf', now, 'LIMIT', 0, 1000)
  for _, t in ipairs(gone) do remove_ticket(t, false) end
  local old = redis.call('ZRANGEBYSCORE', GC, '-inf', now, 'LIMIT', 0, 200)
  for _, gid in ipairs(old) do
    local ts = redis.call('HGET', M, gid)
    if ts then
      for t in string.gmatch(ts, '[^,]+') do
        redis.call('HDEL', R, t)
        redis.call('HDEL', P, t)
        told(t)
        forget_request(t)
      end
    end
    redis.call('HDEL', M, gid, gid .. '|s')
    redis.call('ZREM', GC, gid)
  end
end

-- Only the keys written to, each time one is: every datum then lives keys_ttl (ticket + result +
-- lease time) after its last write, longer than any ticket, result or request id needs it, and a
-- key emptied and re-created gets its TTL from the write that re-created it. A key only read or
-- deleted from needs none. (Touching all nine keys on every call was 44 PEXPIREs a game.)
local function touch(ttl, ...)
  for _, key in ipairs({...}) do redis.call('PEXPIRE', key, ttl) end
end

-- Blocks, both ways (kit/redis/keys.py player_key: "blocks" is a hash of the ids the player blocks,
-- "blocked-by" a set of those who block them). Read in the script on one Redis, which checks no
-- slots; on a cluster the caller reads them (the player's own slot) and passes the ids.
local function blocked_ids(blocks, blocked_by)
  local ids = redis.call('HKEYS', blocks)
  for _, id in ipairs(redis.call('SMEMBERS', blocked_by)) do ids[#ids + 1] = id end
  return ids
end

local function split_ids(csv)
  local ids = {}
  for id in string.gmatch(csv, '[^,]+') do ids[#ids + 1] = id end
  return ids
end

-- HMGET in slices: Lua's unpack takes a few thousand values at most (a player blocked by many).
local function hmget_all(key, fields)
  local out = {}
  for i = 1, #fields, 500 do
    local slice = {}
    for j = i, math.min(i + 499, #fields) do slice[#slice + 1] = fields[j] end
    local got = redis.call('HMGET', key, unpack(slice))
    for j = 1, #slice do out[i + j - 1] = got[j] end
  end
  return out
end

local function set_avoid(t, ids)
  local keep = {}
  if #ids > 0 then
    local queued = hmget_all(W, ids)
    for i = 1, #ids do
      if queued[i] then keep[#keep + 1] = ids[i] end
    end
  end
  if #keep == 0 then
    drop_avoid(t)
    return false
  end
  if redis.call('HSET', K, 'a|' .. t, ',' .. table.concat(keep, ',') .. ',') == 1 then
    redis.call('HINCRBY', K, 'a#', 1)
  end
  return true
end

local function listed()
  return redis.call('HEXISTS', K, 'a#') == 1
end

-- The players ticket `t` avoids, as a set, or false (most tickets: no list).
local function avoid_set(t)
  local raw = redis.call('HGET', K, 'a|' .. t)
  if not raw then return false end
  local set = {}
  for id in string.gmatch(raw, '[^,]+') do set[id] = true end
  return set
end
