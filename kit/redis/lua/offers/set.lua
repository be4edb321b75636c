-- Change a game's offer of one kind, only if nobody changed it since it was read (its revision),
-- and keep a settled offer in the game's offer log (the record's offers: kept as records are).
-- KEYS: offers log
-- ARGV: kind expected_rev status offer log_it
-- (offers: hash kind -> Offer bytes, kind:s -> status, kind:r -> revision; log: list of settled
-- Offers; expected_rev "0" for a kind never offered; log_it "1" to append the offer to the log)
-- Returns: the new revision, or -1 when the offer changed since it was read
local rev = tonumber(redis.call('HGET', KEYS[1], ARGV[1] .. ':r') or '0')
if rev ~= tonumber(ARGV[2]) then return -1 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[4], ARGV[1] .. ':s', ARGV[3], ARGV[1] .. ':r', rev + 1)
redis.call('EXPIRE', KEYS[1], 604800)
if ARGV[5] == '1' then
  redis.call('RPUSH', KEYS[2], ARGV[4])
end
return rev + 1
