#!lua flags=allow-oom
--[[
  MQCMIT of one connection's unit of work within one structure (atomic, idempotent).
  Uncommitted puts become visible in put order and wake waiting getters; messages got under
  syncpoint lose their data. Depth does not change: CURDEPTH already counted both.

  Input:
    KEYS[1]  {tag}:uow:<QM>:<hconn>       unit-of-work list
    KEYS[2]  {tag}:uows                   unit-of-work registry
    KEYS[3]  {tag}:fence                  incarnations fenced by peer recovery (_fence.lua)

    ARGV[1]  structure prefix "{tag}:"
    ARGV[2]  registry member "<QM>:<hconn>"
    ARGV[3]  availability channel of the structure (shard channel; the queue name is the message)
    ARGV[4]  trigger channel of the structure (a shared queue's trigger counts are SPUBLISHed there)
    ARGV[5]  caller: queue manager name
    ARGV[6]  caller: its incarnation (a fenced one gets {2009} and nothing changes)
    ARGV[7]  caller: deadline, ms since the epoch on the CF's clock (TIME): run later,
             the call changes nothing and gets {2345} (_fence.lua)

  Output:
    JSON array, one object per queue touched:
    {"queue": name, "puts": puts made visible, "gets": gets made final, "depth": depth after,
     "available": committed available messages after, "reports": COA and COD reports queued}
]]
--@include _helpers.lua
--@include _fence.lua

local refused = refusal(KEYS[3], ARGV[5], ARGV[6], ARGV[7])
if refused then return { refused } end
--@include _uow.lua

return resolve_uow(ARGV[1], KEYS[1], KEYS[2], ARGV[2], ARGV[3], true, ARGV[4])
