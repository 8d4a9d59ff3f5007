#!lua flags=no-writes
--[[
  One consistent snapshot of a queue's state (DISPLAY QSTATUS, MQINQ, DISPLAY QLOCAL CURDEPTH).

  Input:
    KEYS[1]  {tag}:q:<NAME>:ctl
    KEYS[2]  {tag}:q:<NAME>:opens
    KEYS[3]  {tag}:q:<NAME>:stats

    ARGV[1]  queue key prefix "{tag}:q:<NAME>:"

  Output:
    {2085}                                                 queue has no state
    {0, ctl, opens, stats, available}   ctl, opens, stats: the hashes as flat field/value pairs
]]

local ctl = KEYS[1]
if redis.call("HEXISTS", ctl, "gen") == 0 then return { 2085 } end
return { 0, redis.call("HGETALL", ctl), redis.call("HGETALL", KEYS[2]),
         redis.call("HGETALL", KEYS[3]), redis.call("ZCARD", ARGV[1] .. "idx") }
