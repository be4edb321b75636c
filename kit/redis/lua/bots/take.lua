-- Hand the first waiting request of the given queues to a bot pool: it moves to the in-flight set
-- with a lease in the same step, so a gateway killed before the pool reads it loses nothing (the
-- sweeper re-queues it when the lease runs out and its room still needs a bot).
-- KEYS: inflight queue ...
-- ARGV: now_ms lease_ms
-- Returns: the request's entry, or nil when every queue is empty
for i = 2, #KEYS do
  local entry = redis.call('LPOP', KEYS[i])
  if entry then
    redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), entry)
    return entry
  end
end
return false
