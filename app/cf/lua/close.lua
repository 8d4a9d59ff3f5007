#!lua flags=allow-oom
--[[
  MQCLOSE of one handle: undo its open counts (idempotent: an unknown hobj is a no-op).

  Input:
    KEYS[1]  {tag}:handles:<QM>
    KEYS[2]  {tag}:fence                  incarnations fenced by peer recovery (_fence.lua)

    ARGV[1]  structure prefix "{tag}:"
    ARGV[2]  queue manager name
    ARGV[3]  hobj
    ARGV[4]  caller: queue manager name
    ARGV[5]  caller: its incarnation (a fenced one gets {2009} and nothing changes)
    ARGV[6]  caller: deadline, ms since the epoch on the CF's clock (TIME): run later,
             the call changes nothing and gets {2345} (_fence.lua)

  Output:
    {0}                                   hobj was not open (already closed)
    {1, queue, flags, ipprocs, opprocs}   closed; group-wide counts after (0 if the queue is gone)
]]
--@include _helpers.lua
--@include _fence.lua

local refused = refusal(KEYS[2], ARGV[4], ARGV[5], ARGV[6])
if refused then return { refused } end

local record = redis.call("HGET", KEYS[1], ARGV[3])
if not record then return { 0 } end
local flags, q = string.match(record, "^([^|]*)|(.*)$")
count_open(ARGV[1], q, ARGV[2], flags, -1)
redis.call("HDEL", KEYS[1], ARGV[3])
local c = redis.call("HMGET", ARGV[1] .. "q:" .. q .. ":ctl", "ipprocs", "opprocs")
return { 1, q, flags, tonumber(c[1]) or 0, tonumber(c[2]) or 0 }
