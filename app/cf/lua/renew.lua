--[[
  Renew a queue manager's heartbeat lease, only while this instance still holds it. A lease that
  lapsed is never claimed back by the same incarnation: a peer may have recovered (and fenced) it
  already, so the queue manager must rejoin as a new incarnation (claim.lua).

  Input:
    KEYS[1]  {QSG}:hb:<QM>   heartbeat lease

    ARGV[1]  instance id of this process's incarnation
    ARGV[2]  lease, ms

  Output:
    1 renewed, 0 the lease is lost
]]

if redis.call("GET", KEYS[1]) == ARGV[1] then
  redis.call("PEXPIRE", KEYS[1], ARGV[2])
  return 1
end
return 0
