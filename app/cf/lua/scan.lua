#!lua flags=allow-oom
--[[
  EXPRYINT scan (and REFRESH QMGR TYPE(EXPIRY)) of one queue: discard the expired messages that
  are available, outside any unit of work, queuing their expiration reports.

  Input:
    KEYS[1]  {tag}:q:<NAME>:ctl
    KEYS[2]  {tag}:expq      queues with expiring messages, score = earliest expiry (ms)
    KEYS[3]  {tag}:fence                  incarnations fenced by peer recovery (_fence.lua)

    ARGV[1]  queue key prefix "{tag}:q:<NAME>:"
    ARGV[2]  queue name
    ARGV[3]  queue manager doing the scan (statistics)
    ARGV[4]  now, ms since the epoch
    ARGV[5]  structure prefix "{tag}:"
    ARGV[6]  performance events: "S" shared, "E" private with PERFMEV enabled, "D" disabled
    ARGV[7]  caller: queue manager name
    ARGV[8]  caller: its incarnation (a fenced one gets {2009} and nothing changes)
    ARGV[9]  caller: deadline, ms since the epoch on the CF's clock (TIME): run later,
             the call changes nothing and gets {2345} (_fence.lua)

  Output:
    {discarded, reports, more, depth_event}
             more = 1 when a whole batch was discarded (call again); messages locked by an
             uncommitted get or put are left for a later scan.
]]
--@include _helpers.lua
--@include _fence.lua

local refused = refusal(KEYS[3], ARGV[7], ARGV[8], ARGV[9])
if refused then return { refused } end

local BATCH = 500
local ctl = KEYS[1]
local qp = ARGV[1]
if redis.call("EXISTS", ctl) == 0 then
  redis.call("ZREM", KEYS[2], ARGV[2])  -- the queue was deleted
  return { 0, 0, 0 }
end
local ids = redis.call("ZRANGEBYSCORE", qp .. "exp", "-inf", ARGV[4], "LIMIT", 0, BATCH)
local n, reports, depth = 0, 0, 0
for i = 1, #ids do
  local id = ids[i]
  if redis.call("ZSCORE", qp .. "idx", id) then  -- committed and not held by a get
    local m = parse_meta(redis.call("HGET", qp .. "meta", id))
    depth = discard_expired(ARGV[5], qp, ctl, id, m, ARGV[3])
    n = n + 1
    if m.rep ~= "0" then reports = reports + 1 end
  end
end
-- Keep the structure's note of this queue right: its earliest remaining expiry, or nothing.
local first = redis.call("ZRANGE", qp .. "exp", 0, 0, "WITHSCORES")
if first[1] then
  redis.call("ZADD", KEYS[2], first[2], ARGV[2])
else
  redis.call("ZREM", KEYS[2], ARGV[2])
end
local depth_event = 0
if n > 0 then depth_event = depth_low(ctl, ARGV[6], depth) end
return { n, reports, n >= BATCH and 1 or 0, depth_event }
