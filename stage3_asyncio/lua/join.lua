-- Join the crawl kept under these keys, or start it: the crawl's identity
-- is written once, by the first process, and every later script checks it.
-- KEYS: meta, processes.  ARGV: an identity for a new crawl, when it
-- starts (the client's clock), this process's name, the lease in seconds.
-- Returns the crawl's identity.
local t = redis.call('TIME')
local now = t[1] + t[2] / 1000000
redis.call('HSETNX', KEYS[1], 'id', ARGV[1])
redis.call('HSETNX', KEYS[1], 't0', ARGV[2])
-- The processes at work, each until its lease: --forget waits for them.
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[4]), ARGV[3])
return redis.call('HGET', KEYS[1], 'id')
