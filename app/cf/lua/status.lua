#!lua flags=no-writes
--[[
  One consistent snapshot of a queue's state (DISPLAY QSTATUS, MQINQ, DISPLAY QLOCAL CURDEPTH).

  Input:
    KEYS[1]  {tag}:q:<NAME>:ctl
    KEYS[2]  {tag}:q:<NAME>:opens

    ARGV[1]  queue key prefix "{tag}:q:<NAME>:"

  Output:
    {2085}                                                 queue has no state
    {0, ctl, opens, stats, available}   ctl, opens, stats: the hashes as flat field/value pairs;
                                        stats are ctl's "st:<QM>:<stat>" fields (_helpers.lua),
                                        given as "<QM>:<stat>" and left out of ctl
]]

local ctl = KEYS[1]
if redis.call("HEXISTS", ctl, "gen") == 0 then return { 2085 } end
local attrs, stats = {}, {}
local all = redis.call("HGETALL", ctl)
for i = 1, #all, 2 do
  local field = all[i]
  if string.sub(field, 1, 3) == "st:" then
    stats[#stats + 1] = string.sub(field, 4)
    stats[#stats + 1] = all[i + 1]
  else
    attrs[#attrs + 1] = field
    attrs[#attrs + 1] = all[i + 1]
  end
end
return { 0, attrs, redis.call("HGETALL", KEYS[2]), stats, redis.call("ZCARD", ARGV[1] .. "idx") }
