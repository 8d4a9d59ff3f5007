--[[
  Take expiration reports queued in a structure for the queue manager that sends them. A fenced
  incarnation takes nothing: it could no longer put the reports, and they would be lost.

  Input:
    KEYS[1]  {tag}:expreports:<QM>   list of "<md length>:<MQMD JSON><data>"
    KEYS[2]  {tag}:fence             incarnations fenced by peer recovery (_fence.lua)

    ARGV[1]  how many at most
    ARGV[2]  caller: queue manager name
    ARGV[3]  caller: its incarnation

  Output:
    {2009} fenced; else {0, report, report, ...} (up to ARGV[1])
]]
--@include _fence.lua

if fenced(KEYS[2], ARGV[2], ARGV[3]) then return { FENCED } end
local out = { 0 }
local got = redis.call("LPOP", KEYS[1], ARGV[1])
if got then
  for i = 1, #got do out[#out + 1] = got[i] end
end
return out
