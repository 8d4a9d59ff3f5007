#!lua flags=allow-oom
--[[
  CLEAR QLOCAL: delete every message of a queue, unless it is open or has uncommitted work.

  Input:
    KEYS[1]  {tag}:q:<NAME>:ctl
    KEYS[2]  {tag}:fence                  incarnations fenced by peer recovery (_fence.lua)

    ARGV[1]  queue key prefix "{tag}:q:<NAME>:"
    ARGV[2]  caller: queue manager name
    ARGV[3]  caller: its incarnation (a fenced one gets {2009} and nothing changes)
    ARGV[4]  caller: deadline, ms since the epoch on the CF's clock (TIME): run later,
             the call changes nothing and gets {2345} (_fence.lua)

  Output:
    {code}         2085 not defined, 2042 open by some handle on some QM, 2055 uncommitted work
    {0, removed, seq}  number of messages removed (the depth before); seq: the last message id
                       used, every message removed has an id up to it (the recovery log's record)
]]
--@include _fence.lua

local refused = refusal(KEYS[2], ARGV[2], ARGV[3], ARGV[4])
if refused then return { refused } end

local ctl = KEYS[1]
local qp = ARGV[1]
local a = redis.call("HMGET", ctl, "gen", "handles", "depth", "uncom", "seq")
if not a[1] then return { 2085 } end
if (tonumber(a[2]) or 0) > 0 then return { 2042 } end
if (tonumber(a[4]) or 0) > 0 then return { 2055 } end
local bigs = redis.call("SMEMBERS", qp .. "bigs")
for i = 1, #bigs do redis.call("UNLINK", qp .. "big:" .. bigs[i]) end
redis.call("UNLINK", qp .. "idx", qp .. "mi", qp .. "ci", qp .. "md", qp .. "body",
           qp .. "meta", qp .. "bigs", qp .. "exp", qp .. "gi")
redis.call("HSET", ctl, "depth", 0)
return { 0, tonumber(a[3]) or 0, tonumber(a[5]) or 0 }
