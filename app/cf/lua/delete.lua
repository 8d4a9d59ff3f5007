#!lua flags=allow-oom
--[[
  DELETE QLOCAL: remove every key of a queue, unless it is open or holds messages.

  Input:
    KEYS[1]  {tag}:q:<NAME>:ctl
    KEYS[2]  {tag}:queues
    KEYS[3]  {tag}:gens                   remembers the last generation (see define.lua)
    KEYS[4]  {tag}:seqs                   remembers the last message id (see define.lua)
    KEYS[5]  {tag}:fence                  incarnations fenced by peer recovery (_fence.lua)

    ARGV[1]  queue key prefix "{tag}:q:<NAME>:"
    ARGV[2]  queue name
    ARGV[3]  purge: "1" / "0"
    ARGV[4]  availability channel of the queue's structure (waiters retry and see the queue gone)
    ARGV[5]  caller: queue manager name
    ARGV[6]  caller: its incarnation (a fenced one gets {2009} and nothing changes)
    ARGV[7]  caller: deadline, ms since the epoch on the CF's clock (TIME): run later,
             the call changes nothing and gets {2345} (_fence.lua)

  Output:
    {code}         2085 not defined, 2042 open by some handle on some QM, 2055 messages
                   (not purge) or uncommitted work (even with purge)
    {0, purged, seq}  number of messages removed; seq: the last message id used
]]
--@include _helpers.lua
--@include _fence.lua

local refused = refusal(KEYS[5], ARGV[5], ARGV[6], ARGV[7])
if refused then return { refused } end

local ctl = KEYS[1]
local qp = ARGV[1]
local a = redis.call("HMGET", ctl, "gen", "handles", "depth", "uncom", "seq")
if not a[1] then return { 2085 } end
if (tonumber(a[2]) or 0) > 0 then return { 2042 } end
local depth = tonumber(a[3]) or 0
if depth > 0 and ARGV[3] ~= "1" then return { 2055 } end
if (tonumber(a[4]) or 0) > 0 then return { 2055 } end

notify(qp, ARGV[4], ARGV[2])
local bigs = redis.call("SMEMBERS", qp .. "bigs")
for i = 1, #bigs do redis.call("UNLINK", qp .. "big:" .. bigs[i]) end
redis.call("UNLINK", ctl, qp .. "idx", qp .. "mi", qp .. "ci", qp .. "md", qp .. "body",
           qp .. "meta", qp .. "bigs", qp .. "exp", qp .. "gi", qp .. "opens", qp .. "waiters",
           qp .. "stats")  -- stats: where statistics were kept before they moved into ctl
redis.call("SREM", KEYS[2], ARGV[2])
redis.call("HSET", KEYS[3], ARGV[2], a[1])
redis.call("HSET", KEYS[4], ARGV[2], a[5] or 0)
return { 0, depth, tonumber(a[5]) or 0 }
