#!lua flags=allow-oom
--[[
  Keep a named lease: renew it while this owner holds it, take it when nobody does (the
  expiry-scanner lease: whoever holds it scans the group's shared queues).

  Input:
    KEYS[1]  the lease key

    ARGV[1]  owner
    ARGV[2]  lease, ms

  Output:
    1 held by this owner now (renewed or taken), 0 held by someone else
]]

if redis.call("GET", KEYS[1]) == ARGV[1] then
  redis.call("PEXPIRE", KEYS[1], ARGV[2])
  return 1
end
if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
  return 1
end
return 0
