#!lua flags=allow-oom
--[[
  Renew a queue manager's heartbeat lease, only while this instance still holds it. A lease that
  lapsed is never claimed back by the same incarnation: a peer may have recovered (and fenced) it
  already, so the queue manager must rejoin as a new incarnation (claim.lua).

  One exception: when Redis lost its data (restarted without persistence) the lease and the
  record of the incarnation are both gone. Then no peer can have recovered this incarnation (its
  membership record went too, and peer recovery starts from that record), nor fenced it (the
  fences went too), and its units of work are gone with the structures: the lease is claimed
  back as the same incarnation.

  Input:
    KEYS[1]  {QSG}:hb:<QM>            heartbeat lease
    KEYS[2]  {QSG}:incarnations       hash: queue manager -> its last incarnation number

    ARGV[1]  instance id of this process's incarnation
    ARGV[2]  lease, ms
    ARGV[3]  queue manager name
    ARGV[4]  this incarnation's number

  Output:
    1 renewed, 2 claimed back after Redis lost its data, 0 the lease is lost
]]

local holder = redis.call("GET", KEYS[1])
if holder == ARGV[1] then
  redis.call("PEXPIRE", KEYS[1], ARGV[2])
  return 1
end
if not holder and not redis.call("HGET", KEYS[2], ARGV[3]) then
  redis.call("HSET", KEYS[2], ARGV[3], ARGV[4])
  redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2])
  return 2
end
return 0
