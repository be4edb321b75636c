-- Move the layout's version from `from` to `to`, only while the caller holds the migration lock and
-- the version is still `from` ('' = no version yet): the last write of a migration step, so a step
-- whose lock ran out (another migration took over) never stamps a version it did not finish.
-- KEYS: version lock
-- ARGV: from to token
-- Returns: {1} moved | {0} the lock is not the caller's | {2, the version found ('' = none)} not `from`
if redis.call('GET', KEYS[2]) ~= ARGV[3] then return {0} end
local found = redis.call('GET', KEYS[1]) or ''
if found ~= ARGV[1] then return {2, found} end
redis.call('SET', KEYS[1], ARGV[2])
return {1}
