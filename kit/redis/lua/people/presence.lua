-- Change one player's presence (kit/redis/keys.py presence_key) and work out its state: offline
-- with no gateway's lease running, else playing while seated in a running game (the newest), else
-- online. The state told to followers is kept in s; only a change of it is answered.
-- Operations (ARGV[1]) and their arguments a b c:
--   up      gateway lease_end_ms username|display_name   a gateway holds the player (open or renew)
--   down    gateway                                       the gateway's last stream of theirs closed
--   expire  gateway                                       the sweep: the gateway's lease ran out
--   start   game_id "<started ms>|<game>|<watchable>"     seated in a game that started
--   end     game_id                                       that game ended
-- KEYS: presence
-- ARGV: op now_ms a ...
-- Returns: nil when the told state is unchanged, else {state "<state>|<game id>|<game>|<watchable>",
-- last seen ms, username, display name}
local op, now = ARGV[1], tonumber(ARGV[2])
local key = KEYS[1]
if op == 'up' then
  local sep = string.find(ARGV[5], '|', 1, true)
  redis.call('HSET', key, 'c:' .. ARGV[3], ARGV[4], 'u', string.sub(ARGV[5], 1, sep - 1),
             'dn', string.sub(ARGV[5], sep + 1))
elseif op == 'down' then
  if redis.call('HDEL', key, 'c:' .. ARGV[3]) == 0 then return nil end
elseif op == 'expire' then
  local lease = redis.call('HGET', key, 'c:' .. ARGV[3])
  if not lease then return nil end
  if tonumber(lease) > now then return nil end  -- renewed meanwhile: the gateway still holds them
  redis.call('HDEL', key, 'c:' .. ARGV[3])
elseif op == 'start' then
  redis.call('HSET', key, 'g:' .. ARGV[3], ARGV[4])
elseif op == 'end' then
  if redis.call('HDEL', key, 'g:' .. ARGV[3]) == 0 then return nil end
end
local flat = redis.call('HGETALL', key)
local connected, newest, game = false, -1, nil
for i = 1, #flat, 2 do
  local field, value = flat[i], flat[i + 1]
  local kind = string.sub(field, 1, 2)
  if kind == 'c:' then
    if tonumber(value) > now then
      connected = true
    else
      redis.call('HDEL', key, field)  -- a gateway that stopped renewing (the sweep also finds it)
    end
  elseif kind == 'g:' then
    local started = tonumber(string.match(value, '^(%d+)|'))
    if started > newest then newest, game = started, {string.sub(field, 3), value} end
  end
end
local state = 'offline|||0'
if connected then
  redis.call('HSET', key, 'seen', now)
  state = 'online|||0'
  if game then
    local _, _, kind, watchable = string.find(game[2], '^%d+|([^|]*)|(%d)$')
    state = 'playing|' .. game[1] .. '|' .. kind .. '|' .. watchable
  end
elseif op == 'down' then
  redis.call('HSET', key, 'seen', now)
end
local before = redis.call('HGET', key, 's')
if before == state then return nil end
redis.call('HSET', key, 's', state)
if not before and not connected then return nil end  -- never seen online: nothing to tell
local seen = redis.call('HGET', key, 'seen') or '0'
return {state, seen, redis.call('HGET', key, 'u') or '', redis.call('HGET', key, 'dn') or ''}
