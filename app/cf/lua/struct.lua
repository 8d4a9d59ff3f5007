#!lua flags=allow-oom
--[[
  The state of one CF application structure: whether its contents are there (ACTIVE), were lost
  (FAILED), or are being rebuilt by RECOVER CFSTRUCT (RECOVERING). The hash exists exactly while
  Redis holds the structure: a Redis that restarted without its data has no such hash, and a
  queue manager that expected one (the shared repository names the allocation) sees the loss.

  Input:
    KEYS[1]  {tag}:struct   hash: alloc (allocation id), status, failtime (ms), by (queue manager)

    ARGV[1]  action
    ARGV[2..] the action's operands:
      "CHECK"    ARGV[2] allocation id the repository knows ("" = never allocated),
                 and ARGV[3] a new allocation id, ARGV[4] now (ms)
      "FAIL"     ARGV[2] now (ms), ARGV[3] allocation id (used when there is no hash)
      "RECOVER"  ARGV[2] queue manager starting recovery: FAILED -> RECOVERING
      "ACTIVE"   ARGV[2] allocation id: -> ACTIVE (recovery done, or a new empty allocation)

  Output:
    {status, alloc, failtime, outcome, by}   by: the queue manager recovering it
      outcome of CHECK: "KNOWN" (the hash was there), "NEW" (first allocation, made ACTIVE now),
                        "LOST" (expected but missing: made FAILED now; only one caller sees it)
      outcome of RECOVER: "OK", or "BUSY" (not FAILED: status tells why, by who)
      other actions: "OK"
]]

local key = KEYS[1]
local action = ARGV[1]

local function state(outcome)
  local s = redis.call("HMGET", key, "status", "alloc", "failtime", "by")
  return { s[1] or "", s[2] or "", s[3] or "", outcome, s[4] or "" }
end

if action == "CHECK" then
  if redis.call("EXISTS", key) == 1 then return state("KNOWN") end
  if ARGV[2] == "" then
    redis.call("HSET", key, "alloc", ARGV[3], "status", "ACTIVE", "failtime", "")
    return state("NEW")
  end
  redis.call("HSET", key, "alloc", ARGV[2], "status", "FAILED", "failtime", ARGV[4])
  return state("LOST")
elseif action == "FAIL" then
  if redis.call("EXISTS", key) == 0 then redis.call("HSET", key, "alloc", ARGV[3]) end
  redis.call("HSET", key, "status", "FAILED", "failtime", ARGV[2])
  return state("OK")
elseif action == "RECOVER" then
  if redis.call("HGET", key, "status") ~= "FAILED" then return state("BUSY") end
  redis.call("HSET", key, "status", "RECOVERING", "by", ARGV[2])
  return state("OK")
elseif action == "ACTIVE" then
  redis.call("HSET", key, "alloc", ARGV[2], "status", "ACTIVE", "failtime", "", "by", "")
  return state("OK")
end
return redis.error_reply("struct.lua: unknown action " .. tostring(action))
