-- Pairing a bucket, shared by pair (the worker's pass) and enqueue (a new ticket pairs at once,
-- in the round trip that queued it). Included after matchmaking/bucket, whose keys and helpers it
-- uses. The rule: oldest ticket first, each ticket's rating window base + widen * waited (capped);
-- two tickets fit when their distance is within the larger of their windows, and neither ticket's
-- block list (K a|<ticket>, bucket.lua) names the other's player. The oldest ticket's
-- table is filled with the nearest fitting ratings and forms when full, or at its minimum once its
-- oldest ticket waited fill_wait. Paired tickets leave the queue; each records its game id and seat;
-- the game is named after the oldest ticket (m-<ticket>), fixed before any game is created.
-- The caller sweeps first (expired leases must never pair). Each paired ticket stays its player's
-- in W (with K p|<ticket> -> player) until they are told (bucket.lua, told): if their stream died
-- unanswered, their next search here attaches to this match.
-- Defines: pair_bucket(now, base, widen, maxw, minseats, maxseats, fillwait, resultttl, ttl, most): {{game id, {tickets in seat order}, {player bytes in seat order}}, ...} (at most `most`); writes R M GC W K, removes the paired tickets from Q T L
local function pair_bucket(now, base, widen, maxw, minseats, maxseats, fillwait, resultttl, ttl, most)
  local entries = redis.call('ZRANGE', Q, 0, -1, 'WITHSCORES')
  local n = #entries / 2
  if n < minseats then return {} end
  local ids, rt, enq, win, pids = {}, {}, {}, {}, {}
  local widest = 0
  for i = 1, n do
    ids[i] = entries[2 * i - 1]
    rt[i] = tonumber(entries[2 * i])
    local raw = redis.call('HGET', T, ids[i]) or ''
    enq[i] = tonumber(string.match(raw, '^(%d+)|') or now)
    pids[i] = string.match(raw, '^%d+|%d+|(.*)$')
    win[i] = math.min(maxw, base + widen * math.max(0, now - enq[i]))
    if win[i] > widest then widest = win[i] end
  end
  -- The players each ticket avoids (bucket.lua), read when the ticket is first weighed for a
  -- table, and only when some ticket here has a list.
  local any = listed()
  local avoids = {}
  local function avoid(i)
    if avoids[i] == nil then avoids[i] = any and avoid_set(ids[i]) end
    return avoids[i]
  end
  local order = {}
  for i = 1, n do order[i] = i end
  table.sort(order, function(a, b)
    if enq[a] ~= enq[b] then return enq[a] < enq[b] end
    return ids[a] < ids[b]
  end)
  local function fits(c, group)
    for _, g in ipairs(group) do
      if math.abs(rt[c] - rt[g]) > math.max(win[c], win[g]) then return false end
      local ac, ag = avoid(c), avoid(g)
      if (ac and ac[pids[g]]) or (ag and ag[pids[c]]) then return false end
    end
    return true
  end
  local taken = {}
  local formed = {}
  for _, a in ipairs(order) do
    if #formed >= most then break end
    if not taken[a] then
      local group = {a}
      local lo, hi = a - 1, a + 1
      local scanned = 0
      while #group < maxseats and scanned < 64 do
        scanned = scanned + 1
        while lo >= 1 and taken[lo] do lo = lo - 1 end
        while hi <= n and taken[hi] do hi = hi + 1 end
        local dl, dh = math.huge, math.huge
        if lo >= 1 then dl = rt[a] - rt[lo] end
        if hi <= n then dh = rt[hi] - rt[a] end
        if math.min(dl, dh) > widest then break end
        local c
        if dl <= dh then
          c = lo
          lo = lo - 1
        else
          c = hi
          hi = hi + 1
        end
        if fits(c, group) then group[#group + 1] = c end
      end
      if #group >= maxseats or (#group >= minseats and now - enq[a] >= fillwait) then
        for _, g in ipairs(group) do taken[g] = true end
        formed[#formed + 1] = group
      end
    end
  end
  local out = {}
  for _, group in ipairs(formed) do
    local gid = 'm-' .. ids[group[1]]
    local keyed = {}
    for _, g in ipairs(group) do keyed[#keyed + 1] = {redis.sha1hex(gid .. ids[g]), ids[g], pids[g], g} end
    table.sort(keyed, function(x, y) return x[1] < y[1] end)
    local tickets, players = {}, {}
    for seat, kv in ipairs(keyed) do
      local t, pid = kv[2], kv[3]
      tickets[seat] = t
      players[seat] = redis.call('HGET', P, t) or ''
      remove_ticket(t, true, not avoid(kv[4]))
      redis.call('HSET', R, t, gid .. '|' .. (seat - 1))
      if pid then
        redis.call('HSET', W, pid, t)
        redis.call('HSET', K, 'p|' .. t, pid)
      end
    end
    redis.call('HSET', M, gid, table.concat(tickets, ','))
    redis.call('ZADD', GC, now + resultttl, gid)
    out[#out + 1] = {gid, tickets, players}
  end
  if #formed > 0 then touch(ttl, R, M, GC, W, K) end
  return out
end
