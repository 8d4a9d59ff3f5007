#!lua flags=allow-oom
--[[
  Peer recovery: forget every open handle a (failed) queue manager has in this structure and
  take its counts off every queue.

  Input:
    KEYS[1]  {tag}:handles:<QM>
    KEYS[2]  {tag}:fence                  incarnations fenced by peer recovery (_fence.lua)

    ARGV[1]  structure prefix "{tag}:"
    ARGV[2]  queue manager name
    ARGV[3]  caller: queue manager name
    ARGV[4]  caller: its incarnation (a fenced one gets {2009} and nothing changes)
    ARGV[5]  caller: deadline, ms since the epoch on the CF's clock (TIME): run later,
             the call changes nothing and gets {2345} (_fence.lua)

  Output:
    number of handles cleared
]]
--@include _helpers.lua
--@include _fence.lua

local refused = refusal(KEYS[2], ARGV[3], ARGV[4], ARGV[5])
if refused then return { refused } end

local h = redis.call("HGETALL", KEYS[1])
local n = 0
for i = 2, #h, 2 do
  local flags, q = string.match(h[i], "^([^|]*)|(.*)$")
  count_open(ARGV[1], q, ARGV[2], flags, -1)
  n = n + 1
end
redis.call("DEL", KEYS[1])
return n
