#!lua flags=allow-oom
--[[
  Record the commit of a unit of work that spans several structures, before committing each of
  them: a peer (or the restarted queue manager) that finds the record finishes the commit (roll
  forward) instead of backing the rest out. The group's fence is checked in the same step: once
  peer recovery has fenced the incarnation (it does so before it reads these records), the
  record can no longer be written, so a record that was written is always seen by the recovery.

  Input:
    KEYS[1]  {QSG}:commit:<QM>:<hconn>   the record
    KEYS[2]  {QSG}:fence                 incarnations fenced by peer recovery (_fence.lua)

    ARGV[1]  JSON array of the structure tags of the unit of work
    ARGV[2]  caller: queue manager name
    ARGV[3]  caller: its incarnation
    ARGV[4]  caller: deadline, ms since the epoch on the CF's clock (TIME): run later,
             the call changes nothing and gets {2345} (_fence.lua)

  Output:
    {0}      recorded
    {2009}   the caller is fenced (nothing written)
    {2345}   run after its deadline (nothing written)
]]
--@include _fence.lua

local refused = refusal(KEYS[2], ARGV[2], ARGV[3], ARGV[4])
if refused then return { refused } end
redis.call("SET", KEYS[1], ARGV[1])
return { 0 }
