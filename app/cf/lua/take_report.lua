#!lua flags=allow-oom
--[[
  Take the next expiration report a queue manager is to send from one structure: the one left in
  its in-flight list by an attempt that did not finish (an outage), else the first queued one,
  moved to the in-flight list in the same step - so no other queue manager sends it too, and it
  stays in the structure until the report was put (report_sent). A fenced incarnation takes
  nothing: it could not put the report.

  Input:
    KEYS[1]  {tag}:expreports:<addressee>                 queued reports ("<md length>:<MQMD JSON><data>")
    KEYS[2]  {tag}:expreports:<addressee>:sending:<QM>    the caller's in-flight report
    KEYS[3]  {tag}:fence                                  incarnations fenced by peer recovery (_fence.lua)

    ARGV[1]  caller: queue manager name
    ARGV[2]  caller: its incarnation
    ARGV[3]  caller: deadline, ms since the epoch on the CF's clock (TIME): run later,
             the call changes nothing and gets {2345} (_fence.lua)

  Output:
    {2009}        fenced
    {0}           nothing to send
    {0, report}   the report to send
]]
--@include _fence.lua

local refused = refusal(KEYS[3], ARGV[1], ARGV[2], ARGV[3])
if refused then return { refused } end
local item = redis.call("LINDEX", KEYS[2], 0)
if not item then item = redis.call("LMOVE", KEYS[1], KEYS[2], "LEFT", "RIGHT") end
if not item then return { 0 } end
return { 0, item }
