#!lua
--[[
  RESET QSTATS for one queue manager: return its statistics and start a new interval
  (MsgEnqCount and MsgDeqCount to 0, HighQDepth to the current depth).

  Input:
    KEYS[1]  {tag}:q:<NAME>:ctl
    KEYS[2]  {tag}:q:<NAME>:stats
    KEYS[3]  {tag}:fence                  incarnations fenced by peer recovery (_fence.lua)

    ARGV[1]  queue manager name
    ARGV[2]  now, ms since the epoch (start of the new interval)
    ARGV[3]  caller: queue manager name
    ARGV[4]  caller: its incarnation (a fenced one gets {2009} and nothing changes)
    ARGV[5]  caller: deadline, ms since the epoch on the CF's clock (TIME): run later,
             the call changes nothing and gets {2345} (_fence.lua)

  Output:
    {2085}                                            queue has no state
    {0, enq, deq, hiq, reset_ms_before, depth}        reset_ms_before 0 = never reset
]]
--@include _fence.lua

local refused = refusal(KEYS[3], ARGV[3], ARGV[4], ARGV[5])
if refused then return { refused } end

local depth = redis.call("HGET", KEYS[1], "depth")
if not depth then return { 2085 } end
local qm = ARGV[1]
local s = redis.call("HMGET", KEYS[2], qm .. ":enq", qm .. ":deq", qm .. ":hiq", qm .. ":reset")
redis.call("HSET", KEYS[2], qm .. ":enq", 0, qm .. ":deq", 0, qm .. ":hiq", depth,
           qm .. ":reset", ARGV[2])
return { 0, tonumber(s[1]) or 0, tonumber(s[2]) or 0, tonumber(s[3]) or 0, tonumber(s[4]) or 0,
         tonumber(depth) }
