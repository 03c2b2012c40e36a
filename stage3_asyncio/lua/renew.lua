-- Extend the leases this process still holds, and its own as a process.
-- KEYS: meta leases processes.  ARGV: the crawl's identity, the lease in
-- seconds, this process's name, then the URLs.
if redis.call('HGET', KEYS[1], 'id') ~= ARGV[1] then
  return redis.error_reply('LOST the crawl is not in this store')
end
local t = redis.call('TIME')
local until_ = t[1] + t[2] / 1000000 + tonumber(ARGV[2])
redis.call('ZADD', KEYS[3], until_, ARGV[3])
for i = 4, #ARGV do
  redis.call('ZADD', KEYS[2], 'XX', until_, ARGV[i])  -- XX: only a lease still held.
end
return 0
