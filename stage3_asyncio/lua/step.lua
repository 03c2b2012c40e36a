-- One step of a process: give back the URLs it finished, record their
-- outcomes, queue their new links, then lease the next URLs.
-- KEYS: meta queue seen leases leased records log attempts.  ARGV: the
-- crawl's identity, the lease in seconds, how many URLs to take, the number
-- of URLs done and those URLs, the number of records and (url, record)
-- pairs, then the links' queue entries.
-- Returns the entries taken (each after the number of leases of its URL
-- that ran out), how long until a lease runs out (-1: none is held, so
-- with no entry taken the crawl is finished; 0 when asked to take none),
-- how many links were new, the URLs another process recorded first, and
-- the number of this step.
-- A command given many members at once costs the server about what one
-- member does: what a step does to many URLs alike, it does in one command.
if redis.call('HGET', KEYS[1], 'id') ~= ARGV[1] then
  return redis.error_reply('LOST the crawl is not in this store')
end
local t = redis.call('TIME')
local now = t[1] + t[2] / 1000000
local step = redis.call('HINCRBY', KEYS[1], 'steps', 1)

-- Run a command on a key with the members of list, many at a time (a Lua
-- call takes some thousands of arguments at most).
local function each(command, key, list)
  for i = 1, #list, 1000 do
    redis.call(command, key, unpack(list, i, math.min(i + 999, #list)))
  end
end

-- The URLs done: their leases end.
local done = {}
for n = 1, tonumber(ARGV[4]) do done[n] = ARGV[4 + n] end
each('ZREM', KEYS[4], done)
each('HDEL', KEYS[5], done)
each('HDEL', KEYS[8], done)
local i = 5 + #done
-- Their records, each written once: a URL fetched twice (its lease ran
-- out just as its outcome arrived) keeps the first, and the second
-- process hears that it was refused.
local written, refused = {}, {}
local records = tonumber(ARGV[i])
i = i + 1
for _ = 1, records do
  if redis.call('HSETNX', KEYS[6], ARGV[i], ARGV[i + 1]) == 1 then
    written[#written + 1] = ARGV[i]
  else
    refused[#refused + 1] = ARGV[i]
  end
  i = i + 2
end
each('RPUSH', KEYS[7], written)
-- The links never seen before join the queue.
local function url_of(entry) return string.match(entry, '^%S+ %S+ (.*)$') end
local added = {}
for n = i, #ARGV do
  if redis.call('SADD', KEYS[3], url_of(ARGV[n])) == 1 then added[#added + 1] = ARGV[n] end
end
each('RPUSH', KEYS[2], added)
if ARGV[3] == '0' then return {{}, '0', #added, refused, step} end

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
local urls, entries, leases, held = {}, {}, {}, {}
local until_ = now + tonumber(ARGV[2])
while #urls < tonumber(ARGV[3]) do
  local popped = redis.call('LPOP', KEYS[2], tonumber(ARGV[3]) - #urls)
  if not popped then break end
  for _, entry in ipairs(popped) do
    local url = url_of(entry)
    if redis.call('HEXISTS', KEYS[6], url) == 0 then
      urls[#urls + 1], entries[#entries + 1] = url, entry
      leases[#leases + 1], leases[#leases + 2] = until_, url
      held[#held + 1], held[#held + 2] = url, entry
    else
      redis.call('HDEL', KEYS[8], url)
    end
  end
end
if #urls > 0 then
  each('ZADD', KEYS[4], leases)
  each('HSET', KEYS[5], held)
  local taken = {}
  for first = 1, #urls, 1000 do
    local last = math.min(first + 999, #urls)
    local tries = redis.call('HMGET', KEYS[8], unpack(urls, first, last))
    for n = first, last do
      taken[n] = (tries[n - first + 1] or '0') .. ' ' .. entries[n]
    end
  end
  return {taken, '0', #added, refused, step}
end
local first = redis.call('ZRANGE', KEYS[4], 0, 0, 'WITHSCORES')
if #first == 0 then return {{}, '-1', #added, refused, step} end
return {{}, tostring(first[2] - now), #added, refused, step}
