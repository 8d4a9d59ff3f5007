--[[
  Shared fragment, not a script: the fence of one structure (or of the group) against
  incarnations of queue managers that peer recovery has resolved.

    {tag}:fence   hash   queue manager -> lowest incarnation of it still allowed

  Peer recovery raises a failed queue manager's entry above the incarnation it recovers (fence.lua)
  BEFORE it resolves that incarnation's units of work, and every state-changing script checks the
  caller here first, in the same atomic step as its change: an incarnation that lost its lease
  (paused, partitioned, stalled) can never change the structure again, whatever it still believes.
  The caller is passed as the last KEYS entry (the fence key) and the last two ARGV entries
  (queue manager name, incarnation); a fenced call changes nothing and returns {2009}.
]]

local FENCED = 2009

local function fenced(fence_key, qmgr, incarnation)
  local lowest = redis.call("HGET", fence_key, qmgr)
  return lowest ~= false and tonumber(incarnation) < tonumber(lowest)
end
