-- Remove every key of a finished crawl, in one step: no process can start
-- or step in between.
-- KEYS: queue leases processes.  ARGV: the prefix of the crawl's keys.
-- Returns how many URLs are queued, leased, and how many processes are at
-- work (the lease of each has not run out), then how many keys were
-- removed: none unless the first three are 0.
local t = redis.call('TIME')
local now = t[1] + t[2] / 1000000
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
local queued = redis.call('LLEN', KEYS[1])
local leased = redis.call('ZCARD', KEYS[2])
local working = redis.call('ZCARD', KEYS[3])
if queued + leased + working > 0 then return {queued, leased, working, 0} end
local keys = redis.call('KEYS', ARGV[1] .. '*')
for i = 1, #keys, 1000 do
  redis.call('UNLINK', unpack(keys, i, math.min(i + 999, #keys)))
end
return {0, 0, 0, #keys}
