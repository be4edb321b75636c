-- A matchmaking bucket's keys and the ticket bookkeeping every bucket script shares. Included
-- (-- include: matchmaking/bucket) by enqueue, cancel, renew, lookup, started and pair, whose
-- KEYS are always the bucket's nine keys in this order (kit/redis/keys.py bucket_keys().all()).
-- remove_ticket drops a ticket from the queue, its times, its lease and the player's entry (and,
-- unless keep_player, its Player bytes and request id); sweep removes tickets whose lease ran
-- out and the results of matches older than their keep time; touch keeps alive the keys a call
-- wrote to. A paired ticket stays the player's in W (K p|<ticket> names its player) until a search
-- of theirs was told the match (told) or the match's result is dropped: a new search of the
-- player attaches to that match instead of queueing afresh (their stream may have died unanswered).
-- Defines: Q T L P W R M GC K, forget_request(ticket), told(ticket), remove_ticket(ticket, keep_player), sweep(now), touch(ttl, key...)
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

local function remove_ticket(t, keep_player)
  local raw = redis.call('HGET', T, t)
  if raw then
    local pid = string.match(raw, '^%d+|%d+|(.*)$')
    if pid and redis.call('HGET', W, pid) == t then redis.call('HDEL', W, pid) end
  end
  redis.call('ZREM', Q, t)
  redis.call('HDEL', T, t)
  redis.call('ZREM', L, t)
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
