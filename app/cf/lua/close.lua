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

  Output:
    {0}                                   hobj was not open (already closed)
    {1, queue, flags, ipprocs, opprocs}   closed; group-wide counts after (0 if the queue is gone)
]]
--@include _helpers.lua
--@include _fence.lua

if fenced(KEYS[2], ARGV[4], ARGV[5]) then return { FENCED } end

local record = redis.call("HGET", KEYS[1], ARGV[3])
if not record then return { 0 } end
local flags, q = string.match(record, "^([^|]*)|(.*)$")
count_open(ARGV[1], q, ARGV[2], flags, -1)
redis.call("HDEL", KEYS[1], ARGV[3])
local c = redis.call("HMGET", ARGV[1] .. "q:" .. q .. ":ctl", "ipprocs", "opprocs")
return { 1, q, flags, tonumber(c[1]) or 0, tonumber(c[2]) or 0 }
