-- Take one of a host's slots, if its limit and its delay allow.
-- KEYS: meta, the host's key.  ARGV: the crawl's identity, the holder,
-- the delay, the limit (0: none), the seconds a slot is held at most, the
-- seconds a 429 or 503 answer asked the host to be left alone from now.
-- Returns '0' when the request may start now (the slot is taken), '-1'
-- when the host has no free slot, or how many seconds its delay still needs.
if redis.call('HGET', KEYS[1], 'id') ~= ARGV[1] then
  return redis.error_reply('LOST the crawl is not in this store')
end
local t = redis.call('TIME')
local now = t[1] + t[2] / 1000000
-- The host's key is a sorted set of what ends at a time: each slot taken
-- (its holder) and the host's next start ('next').  What has ended goes,
-- and the key expires with its last member, so that a host no longer
-- crawled leaves nothing behind.
local function expire_with_last()
  local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
  if #last > 0 then
    redis.call('PEXPIRE', KEYS[2], math.ceil((last[2] - now) * 1000) + 1)
  end
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local next_start = tonumber(redis.call('ZSCORE', KEYS[2], 'next') or '0')
local held = tonumber(ARGV[6])
if held > 0 and now + held > next_start then
  next_start = now + held
  redis.call('ZADD', KEYS[2], next_start, 'next')
  expire_with_last()
end
local slots = redis.call('ZCARD', KEYS[2])
if next_start > now then slots = slots - 1 end  -- 'next' holds no slot.
local limit = tonumber(ARGV[4])
if limit > 0 and slots >= limit then return '-1' end
if next_start > now then return tostring(next_start - now) end
if tonumber(ARGV[3]) > 0 then
  redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), 'next')
end
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[5]), ARGV[2])
expire_with_last()
return '0'
