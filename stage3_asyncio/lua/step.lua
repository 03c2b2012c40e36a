-- One step of a process: give back the URLs it finished, record their
-- outcomes, queue their new links, then lease the next URLs.
-- KEYS: meta queue seen leases leased records log attempts.  ARGV: the
-- crawl's identity, the lease in seconds, how many URLs to take, the number
-- of URLs done and those URLs, the number of records and (url, record)
-- pairs, then (url, entry) pairs of links.
-- Returns the entries taken (each after the number of leases of its URL
-- that ran out), how long until a lease runs out (-1: none is held, so
-- with no entry taken the crawl is finished; 0 when asked to take none),
-- how many links were new, the URLs another process recorded first, and
-- the number of this step.
if redis.call('HGET', KEYS[1], 'id') ~= ARGV[1] then
  return redis.error_reply('LOST the crawl is not in this store')
end
local t = redis.call('TIME')
local now = t[1] + t[2] / 1000000
local step = redis.call('HINCRBY', KEYS[1], 'steps', 1)

-- The URLs done: their leases end.
local i = 5
for _ = 1, tonumber(ARGV[4]) do
  redis.call('ZREM', KEYS[4], ARGV[i])
  redis.call('HDEL', KEYS[5], ARGV[i])
  redis.call('HDEL', KEYS[8], ARGV[i])
  i = i + 1
end
-- Their records, each written once: a URL fetched twice (its lease ran
-- out just as its outcome arrived) keeps the first, and the second
-- process hears that it was refused.
local refused = {}
local records = tonumber(ARGV[i])
i = i + 1
for _ = 1, records do
  if redis.call('HSETNX', KEYS[6], ARGV[i], ARGV[i + 1]) == 1 then
    redis.call('RPUSH', KEYS[7], ARGV[i])
  else
    refused[#refused + 1] = ARGV[i]
  end
  i = i + 2
end
-- The links never seen before join the queue.
local added = 0
while i < #ARGV do
  if redis.call('SADD', KEYS[3], ARGV[i]) == 1 then
    redis.call('RPUSH', KEYS[2], ARGV[i + 1])
    added = added + 1
  end
  i = i + 2
end
if ARGV[3] == '0' then return {{}, '0', added, refused, step} end

-- A lease that ran out puts its URL back at the head of the queue, and
-- counts against it: a URL whose every process dies is given up.
for _, url in ipairs(redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now)) do
  local entry = redis.call('HGET', KEYS[5], url)
  if entry then redis.call('LPUSH', KEYS[2], entry) end
  redis.call('HINCRBY', KEYS[8], url, 1)
  redis.call('ZREM', KEYS[4], url)
  redis.call('HDEL', KEYS[5], url)
end
-- Take the next URLs, each with a fresh lease; one recorded meanwhile
-- (by the process whose lease had run out) is not fetched again.
local taken = {}
while #taken < tonumber(ARGV[3]) do
  local entry = redis.call('LPOP', KEYS[2])
  if not entry then break end
  local url = string.match(entry, '^%S+ %S+ (.*)$')
  if redis.call('HEXISTS', KEYS[6], url) == 0 then
    redis.call('ZADD', KEYS[4], now + tonumber(ARGV[2]), url)
    redis.call('HSET', KEYS[5], url, entry)
    local tries = redis.call('HGET', KEYS[8], url) or '0'
    taken[#taken + 1] = tries .. ' ' .. entry
  else
    redis.call('HDEL', KEYS[8], url)
  end
end
if #taken > 0 then return {taken, '0', added, refused, step} end
local first = redis.call('ZRANGE', KEYS[4], 0, 0, 'WITHSCORES')
if #first == 0 then return {taken, '-1', added, refused, step} end
return {taken, tostring(first[2] - now), added, refused, step}
