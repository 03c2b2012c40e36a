-- Count one more page fetched, if max_pages allows.
-- KEYS: meta, pages.  ARGV: the crawl's identity, max_pages.
-- Returns 1 when the page may be fetched, 0 when the limit is reached.
if redis.call('HGET', KEYS[1], 'id') ~= ARGV[1] then
  return redis.error_reply('LOST the crawl is not in this store')
end
local pages = tonumber(redis.call('GET', KEYS[2]) or '0')
if pages >= tonumber(ARGV[2]) then return 0 end
redis.call('INCR', KEYS[2])
return 1
