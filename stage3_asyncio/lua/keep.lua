-- Set one field of a hash of the crawl, if the crawl is still there.
-- KEYS: meta, the hash.  ARGV: the crawl's identity, the field, the value.
if redis.call('HGET', KEYS[1], 'id') ~= ARGV[1] then
  return redis.error_reply('LOST the crawl is not in this store')
end
return redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
