--[[
  Shared fragment, not a script: whether a caller may change a structure (or the group's records)
  now - the fence against incarnations of queue managers that peer recovery has resolved, and the
  call's own deadline.

    {tag}:fence   hash   queue manager -> lowest incarnation of it still allowed

  Peer recovery raises a failed queue manager's entry above the incarnation it recovers (fence.lua)
  BEFORE it resolves that incarnation's units of work, and every state-changing script checks the
  caller here first, in the same atomic step as its change: an incarnation that lost its lease
  (paused, partitioned, stalled) can never change the structure again, whatever it still believes.

  The deadline: a queue manager that gets no reply in time answers its caller, so a script that
  Redis runs only later (Redis was stalled, the command sat in a socket buffer) must not act
  behind that answer. The caller passes a deadline on the coupling facility's clock; run after
  it, the script changes nothing. The queue manager answers a call without a reply only once the
  deadline (plus a margin for the clocks) has passed (app/cf/deadline.py), so from then on the
  outcome can no longer change. Redis 7 replicates a script's effects, so TIME is allowed here.

  The caller is passed as the last KEYS entry (the fence key) and the last three fixed ARGV
  entries (queue manager name, incarnation, deadline); a fenced call changes nothing and returns
  {2009}, a late one changes nothing and returns {2345}.
]]

local FENCED = 2009
local LATE = 2345

local function fenced(fence_key, qmgr, incarnation)
  local lowest = redis.call("HGET", fence_key, qmgr)
  return lowest ~= false and tonumber(incarnation) < tonumber(lowest)
end

-- The reason a call may not run (LATE or FENCED), or nil when it may.
local function refusal(fence_key, qmgr, incarnation, deadline)
  local t = redis.call("TIME")
  if tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) > tonumber(deadline) then return LATE end
  if fenced(fence_key, qmgr, incarnation) then return FENCED end
  return nil
end
