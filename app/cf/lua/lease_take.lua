#!lua
--[[
  Take a named lease (a lock with an expiry) unless someone holds it: the recovery lock of a
  failed queue manager, the backup lock of a structure, the group's expiry-scanner lease.

  Input:
    KEYS[1]  the lease key (app/cf/keys.py: recovery_lock, backup_lock, scanner_lease)

    ARGV[1]  owner: the queue manager taking it
    ARGV[2]  lease, ms

  Output:
    1 taken, 0 held by someone (this owner included: a lease is not re-entrant)
]]

if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
  return 1
end
return 0
