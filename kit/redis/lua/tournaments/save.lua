-- Compare-and-set a running tournament's state (rev must still be `expected_rev`), with its
-- events; a finished state also moves it from running to finished.
-- KEYS: tournament events running list_running list_finished
-- ARGV: expected_rev state finished now_ms id created_ms maxlen ...
-- Returns: 1 saved, 0 someone else saved first (reload), -1 not running
if redis.call('HGET', KEYS[1], 'status') ~= 'running' then return -1 end
if tonumber(redis.call('HGET', KEYS[1], 'rev') or '0') ~= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[2])
redis.call('HINCRBY', KEYS[1], 'rev', 1)
if ARGV[3] == '1' then
  redis.call('HSET', KEYS[1], 'status', 'finished', 'finished_ms', ARGV[4])
  redis.call('SREM', KEYS[3], ARGV[5])
  redis.call('ZREM', KEYS[4], ARGV[5])
  redis.call('ZADD', KEYS[5], ARGV[6], ARGV[5])
end
for i = 8, #ARGV do redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[7], '*', 'e', ARGV[i]) end
return 1
