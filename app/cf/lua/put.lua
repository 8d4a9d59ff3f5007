#!lua
--[[
  MQPUT of one message to one queue: validate, store, count, make visible (or enlist in the
  unit of work), update this QM's statistics and wake waiting getters. The hot path: one call.
  The put itself is _put.lua's (put_begin, put_message, put_end), shared with put_batch.lua.

  Input:
    KEYS[1]  {tag}:q:<NAME>:ctl          queue control hash
    KEYS[2]  {tag}:uow:<QM>:<hconn>       unit-of-work list (written only under syncpoint)
    KEYS[3]  {tag}:uows                   unit-of-work registry (written only under syncpoint)
    KEYS[4]  {tag}:expq                   queues with expiring messages, score = earliest expiry
    KEYS[5]  {tag}:fence                  incarnations fenced by peer recovery (_fence.lua)

    ARGV[1]  queue key prefix "{tag}:q:<NAME>:"
    ARGV[2]  queue name
    ARGV[3]  queue manager name (statistics, unit-of-work registry)
    ARGV[4]  hconn
    ARGV[5]  definition generation the handle was opened with, "" = do not check (MQPUT1)
    ARGV[6]  syncpoint: "1" inside the unit of work, "0" immediately
    ARGV[7]  message priority 0-9 (resolved by the caller)
    ARGV[8]  persistent: "1" / "0"
    ARGV[9]  msg_id, 48 upper-case hex digits, "" when all zero
    ARGV[10] correl_id, same form
    ARGV[11] MQMD JSON (stored as given)
    ARGV[12] message data (bytes)
    ARGV[13] now, ms since the epoch
    ARGV[14] availability channel of the queue's structure (SPUBLISHed only when getters wait)
    ARGV[15] offload override: "1" / "0", "" = use the queue's ctl "offload" attribute
    ARGV[16] expiry time, ms since the epoch; "0" = unlimited
    ARGV[17] expiration report asked for: "0" none, "1", "2" with 100 bytes, "3" with all data
    ARGV[18] queue manager an expiration report goes to (the ReplyToQMgr)
    ARGV[19] performance events: "S" shared, "E" private with PERFMEV enabled, "D" disabled
    ARGV[20] trigger channel of the structure (a shared queue's trigger counts are SPUBLISHed there)
    ARGV[21] "1": return the stored metadata (a persistent message the queue manager logs for
             RECOVER CFSTRUCT), "0": return ""
    ARGV[22] group: "" when the message is in no group and no segment, else its group index
             entry "<group_id>:<seq10>:<offset10>:<L|G|S>" (_helpers.lua)
    ARGV[23] caller: queue manager name
    ARGV[24] caller: its incarnation (a fenced one gets {2009} and nothing changes)
    ARGV[25] caller: deadline, ms since the epoch on the CF's clock (TIME): run later,
             the call changes nothing and gets {2345} (_fence.lua)

  Output:
    {code}   on failure: 2085 queue not defined (no gen given), 2052 queue deleted (gen given),
             2041 generation changed, 2051 put inhibited, 2030 too big
    {2053, full_event}   queue full; full_event 2053 when a Queue Full event fired, else 0
    {0, depth_after, seq, depth_before, available_after, ipprocs, opprocs, visible, depth_event,
     service_event, trig_before, trig_after, meta}  events: 0 or the reason of the performance event
             that fired (2224, 2226); trig_*: trigger counts (-1 when the put does not count);
             seq is the message's id; available_after counts committed available messages;
             ipprocs/opprocs are the group-wide open counts; visible is 1 when committed now;
             meta: the message's packed metadata when ARGV[21] asked for it.
]]
--@include _helpers.lua
--@include _fence.lua
--@include _put.lua

local refused = refusal(KEYS[5], ARGV[23], ARGV[24], ARGV[25])
if refused then return { refused } end

local q = { ctl = KEYS[1], uow = KEYS[2], uows = KEYS[3], expq = KEYS[4], qp = ARGV[1], name = ARGV[2],
            qm = ARGV[3], hconn = ARGV[4], gen = ARGV[5], sync = ARGV[6], now = ARGV[13],
            channel = ARGV[14], offload = ARGV[15], perf = ARGV[19], trig_channel = ARGV[20] }
local s, code = put_begin(q)
if not s then return { code } end
local r = put_message(q, s, { prio = ARGV[7], pers = ARGV[8], mid = ARGV[9], cid = ARGV[10], md = ARGV[11],
                              body = ARGV[12], exp = ARGV[16], rep = ARGV[17], rq = ARGV[18],
                              want_meta = ARGV[21], grp = ARGV[22] })
put_end(q, s)
return r
