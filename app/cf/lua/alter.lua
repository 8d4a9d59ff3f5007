#!lua
--[[
  ALTER / MQSET of a queue's runtime attributes, optionally starting a new definition
  generation (handles opened before then get MQRC_OBJECT_CHANGED). Waiting getters are woken
  so that, for example, GET(DISABLED) ends their wait with MQRC_GET_INHIBITED.

  Input:
    KEYS[1]  {tag}:q:<NAME>:ctl
    KEYS[2]  {tag}:fence                  incarnations fenced by peer recovery (_fence.lua)

    ARGV[1]  queue key prefix "{tag}:q:<NAME>:"
    ARGV[2]  queue name
    ARGV[3]  "1" to increment the generation, "0" not to
    ARGV[4]  availability channel of the queue's structure
    ARGV[5]  caller: queue manager name
    ARGV[6]  caller: its incarnation (a fenced one gets {2009} and nothing changes)
    ARGV[7]  caller: deadline, ms since the epoch on the CF's clock (TIME): run later,
             the call changes nothing and gets {2345} (_fence.lua)
    ARGV[8..] attribute name, value, ...

  Output:
    {2085}      queue has no state
    {0, gen}    generation after
]]
--@include _helpers.lua
--@include _fence.lua

local refused = refusal(KEYS[2], ARGV[5], ARGV[6], ARGV[7])
if refused then return { refused } end

local ctl = KEYS[1]
local gen = redis.call("HGET", ctl, "gen")
if not gen then return { 2085 } end
if #ARGV > 7 then
  redis.call("HSET", ctl, unpack(ARGV, 8))
end
if ARGV[3] == "1" then gen = redis.call("HINCRBY", ctl, "gen", 1) end
notify(ARGV[1], ARGV[4], ARGV[2])
return { 0, tonumber(gen) }
