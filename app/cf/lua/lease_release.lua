#!lua flags=allow-oom
--[[
  Give a named lease up, only if this owner still holds it (a lease that lapsed and was taken by
  another queue manager is left to that one).

  Input:
    KEYS[1]  the lease key

    ARGV[1]  owner

  Output:
    1 released, 0 not held by this owner
]]

if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("DEL", KEYS[1])
end
return 0
