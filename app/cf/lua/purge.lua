#!lua flags=allow-oom
--[[
  Restart of a queue manager: discard the nonpersistent messages of one of its private queues
  (z/OS: nonpersistent messages on a queue manager's own queues do not survive its restart;
  persistent ones do). Run after the previous incarnation's units of work were resolved, so
  every message left is committed; one batch of the queue's messages per call.

  Input:
    KEYS[1]  {tag}:q:<NAME>:ctl
    KEYS[2]  {tag}:expq      queues with expiring messages, score = earliest expiry (ms)
    KEYS[3]  {tag}:fence                  incarnations fenced by peer recovery (_fence.lua)

    ARGV[1]  queue key prefix "{tag}:q:<NAME>:"
    ARGV[2]  queue name
    ARGV[3]  HSCAN cursor of the queue's messages ("0" to start)
    ARGV[4]  caller: queue manager name
    ARGV[5]  caller: its incarnation (a fenced one gets {2009} and nothing changes)
    ARGV[6]  caller: deadline, ms since the epoch on the page set's clock (TIME): run later,
             it changes nothing and returns {2345}

  Output:
    {code}         2085 not defined, 2009 fenced, 2345 run after its deadline
    {0, discarded, cursor}  messages discarded by this call; cursor "0" once the whole queue was seen
]]
--@include _helpers.lua
--@include _fence.lua

local refused = refusal(KEYS[3], ARGV[4], ARGV[5], ARGV[6])
if refused then return { refused } end

local ctl = KEYS[1]
local qp = ARGV[1]
if redis.call("EXISTS", ctl) == 0 then return { 2085 } end
local scan = redis.call("HSCAN", qp .. "meta", ARGV[3], "COUNT", 500)
local found = scan[2]
local n = 0
for i = 1, #found, 2 do
  local id = found[i]
  local m = parse_meta(found[i + 1])
  if m.pers == "0" and redis.call("ZSCORE", qp .. "idx", id) then
    index_remove(qp, id, m)
    delete_data(qp, id, m)
    n = n + 1
  end
end
if n > 0 then
  redis.call("HINCRBY", ctl, "depth", -n)
  local first = redis.call("ZRANGE", qp .. "exp", 0, 0, "WITHSCORES")
  if first[1] then
    redis.call("ZADD", KEYS[2], first[2], ARGV[2])
  else
    redis.call("ZREM", KEYS[2], ARGV[2])
  end
end
return { 0, n, scan[1] }
