#!lua flags=allow-oom
--[[
  MQBACK of one connection's unit of work within one structure (atomic, idempotent); also what
  a peer runs for a failed queue manager's units of work.
  Uncommitted puts are deleted (depth - 1 each); messages got under syncpoint return to their
  original place with backout count + 1 (depth + 1 each) and wake waiting getters.

  Input:
    KEYS[1]  {tag}:uow:<QM>:<hconn>       unit-of-work list
    KEYS[2]  {tag}:uows                   unit-of-work registry
    KEYS[3]  {tag}:fence                  incarnations fenced by peer recovery (_fence.lua)

    ARGV[1]  structure prefix "{tag}:"
    ARGV[2]  registry member "<QM>:<hconn>"
    ARGV[3]  availability channel of the structure (shard channel; the queue name is the message)
    ARGV[4]  trigger channel (commit.lua's; not used by a backout)
    ARGV[5]  "1": an application's MQBACK (a get marked MQGMO_MARK_SKIP_BACKOUT stays got, in a
             new unit of work, _uow.lua), "0": any other backout
    ARGV[6]  caller: queue manager name
    ARGV[7]  caller: its incarnation (a fenced one gets {2009} and nothing changes)
    ARGV[8]  caller: deadline, ms since the epoch on the CF's clock (TIME): run later,
             the call changes nothing and gets {2345} (_fence.lua)

  Output:
    JSON array, one object per queue touched:
    {"queue": name, "puts": puts removed, "gets": gets restored, "depth": depth after,
     "available": committed available messages after, "reports": always 0: a backout queues no report}
]]
--@include _helpers.lua
--@include _fence.lua

local refused = refusal(KEYS[3], ARGV[6], ARGV[7], ARGV[8])
if refused then return { refused } end
--@include _uow.lua

return resolve_uow(ARGV[1], KEYS[1], KEYS[2], ARGV[2], ARGV[3], false, nil, ARGV[5] == "1")
