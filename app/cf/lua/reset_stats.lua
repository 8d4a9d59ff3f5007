#!lua
--[[
  RESET QSTATS for one queue manager: return its statistics and start a new interval
  (MsgEnqCount and MsgDeqCount to 0, HighQDepth to the current depth).

  Input:
    KEYS[1]  {tag}:q:<NAME>:ctl           (the statistics are its "st:<QM>:<stat>" fields)
    KEYS[2]  {tag}:fence                  incarnations fenced by peer recovery (_fence.lua)

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
--@include _helpers.lua
--@include _fence.lua

local refused = refusal(KEYS[2], ARGV[3], ARGV[4], ARGV[5])
if refused then return { refused } end

local depth = redis.call("HGET", KEYS[1], "depth")
if not depth then return { 2085 } end
local qm = ARGV[1]
local s = redis.call("HMGET", KEYS[1], stat_field(qm, "enq"), stat_field(qm, "deq"), stat_field(qm, "hiq"),
                     stat_field(qm, "reset"))
redis.call("HSET", KEYS[1], stat_field(qm, "enq"), 0, stat_field(qm, "deq"), 0, stat_field(qm, "hiq"), depth,
           stat_field(qm, "reset"), ARGV[2])
return { 0, tonumber(s[1]) or 0, tonumber(s[2]) or 0, tonumber(s[3]) or 0, tonumber(s[4]) or 0,
         tonumber(depth) }
