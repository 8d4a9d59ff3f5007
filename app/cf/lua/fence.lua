#!lua flags=allow-oom
--[[
  Fence incarnations of a queue manager in one structure (or in the group's key space): peer
  recovery runs it in every structure it resolves BEFORE it resolves anything, so that the
  recovered incarnation - which may still be running, paused or cut off from Redis - can never
  change that structure again (every state-changing script checks _fence.lua first).

  Input:
    KEYS[1]  {tag}:fence       hash: queue manager -> lowest incarnation still allowed

    ARGV[1]  queue manager name
    ARGV[2]  lowest incarnation still allowed (every lower one is fenced)

  Output:
    the lowest incarnation allowed after the call (the fence only ever rises)
]]

local now = tonumber(redis.call("HGET", KEYS[1], ARGV[1]) or "0")
local want = tonumber(ARGV[2])
if want > now then
  redis.call("HSET", KEYS[1], ARGV[1], ARGV[2])
  return ARGV[2]
end
return redis.call("HGET", KEYS[1], ARGV[1])
