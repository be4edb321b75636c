-- A director's change, compare-and-set: the tournament must still be in `status` at `version`
-- (registering: the registration version rv; running: the state rev). Writes what is given (spec,
-- state, a player added or removed, a ban, the start-time listing), bumps the version, appends the
-- audit entry and the events; a finished state moves it from running to finished.
-- KEYS: tournament events audit reg who banned running list_running list_finished due
-- ARGV: status version spec state finished now_ms id created_ms starts_at_ms audit add add_json remove ban maxlen ...
-- Returns: 1 done, 0 someone else changed it first (reload), -1 not in that status any more
if redis.call('HGET', KEYS[1], 'status') ~= ARGV[1] then return -1 end
local field = 'rev'
if ARGV[1] == 'registering' then field = 'rv' end
if tonumber(redis.call('HGET', KEYS[1], field) or '0') ~= tonumber(ARGV[2]) then return 0 end
redis.call('HINCRBY', KEYS[1], field, 1)
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'spec', ARGV[3]) end
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'state', ARGV[4]) end
if ARGV[11] ~= '' and not redis.call('ZSCORE', KEYS[4], ARGV[11]) then
  local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
  redis.call('ZADD', KEYS[4], seq, ARGV[11])
  redis.call('HSET', KEYS[5], ARGV[11], ARGV[12])
end
if ARGV[13] ~= '' then
  redis.call('ZREM', KEYS[4], ARGV[13])
  redis.call('HDEL', KEYS[5], ARGV[13])
end
if ARGV[14] ~= '' then redis.call('SADD', KEYS[6], ARGV[14]) end
local starts = tonumber(ARGV[9])
if starts == 0 then redis.call('ZREM', KEYS[10], ARGV[7]) end
if starts > 0 then redis.call('ZADD', KEYS[10], starts, ARGV[7]) end
if ARGV[5] == '1' then
  redis.call('HSET', KEYS[1], 'status', 'finished', 'finished_ms', ARGV[6])
  redis.call('SREM', KEYS[7], ARGV[7])
  redis.call('ZREM', KEYS[8], ARGV[7])
  redis.call('ZADD', KEYS[9], ARGV[8], ARGV[7])
end
if ARGV[10] ~= '' then redis.call('RPUSH', KEYS[3], ARGV[10]) end
for i = 16, #ARGV do redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[15], '*', 'e', ARGV[i]) end
return 1
