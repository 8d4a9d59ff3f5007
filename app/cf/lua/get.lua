#!lua flags=allow-oom
--[[
  MQGET (destructive or browse) of one message: find the first matching message in delivery
  order through the indexes (never a scan), check truncation, remove it or enlist it in the unit
  of work, update this QM's statistics; when nothing matches, register a waiter. The get itself
  is _get.lua's get_message, shared with get_batch.lua.

  Input:
    KEYS[1]  {tag}:q:<NAME>:ctl
    KEYS[2]  {tag}:uow:<QM>:<hconn>       unit-of-work list (written only under syncpoint)
    KEYS[3]  {tag}:uows                   unit-of-work registry
    KEYS[4]  {tag}:held:<QM>              messages held by call token (held.lua)
    KEYS[5]  {tag}:fence                  incarnations fenced by peer recovery (_fence.lua)

    ARGV[1]  queue key prefix "{tag}:q:<NAME>:"
    ARGV[2]  queue name
    ARGV[3]  queue manager name
    ARGV[4]  hconn
    ARGV[5]  definition generation of the handle, "" = do not check
    ARGV[6]  mode: GET | BROWSE_FIRST | BROWSE_NEXT | MSG_UNDER_CURSOR | BROWSE_UNDER_CURSOR
    ARGV[7]  syncpoint: YES | NO | IF_PERSISTENT (ignored when browsing)
    ARGV[8]  match msg_id (upper-case hex), "" = any
    ARGV[9]  match correl_id, "" = any
    ARGV[10] browse cursor: score16 of the last browsed message, "" = none
    ARGV[11] buffer length in bytes, -1 = unlimited
    ARGV[12] accept truncated message: "1" / "0"
    ARGV[13] now, ms since the epoch
    ARGV[15] structure prefix "{tag}:" (expiration reports are queued there)
    ARGV[16] performance events: "S" shared, "E" private with PERFMEV enabled, "D" disabled
    ARGV[14] waiter registration ms: when > 0 and no message matches, keep the queue's waiters
             key alive at least that long so puts and commits publish the availability channel
    ARGV[17] group and token selection, "" none (_get.lua's `select`)
    ARGV[18] call token "<incarnation>:<n>" of a destructive get outside syncpoint, "" none: a
             message got is held under it (held.lua), not deleted, until released or restored
    ARGV[19] caller: queue manager name
    ARGV[20] caller: its incarnation (a fenced one gets {2009} and nothing changes)
    ARGV[21] caller: deadline, ms since the epoch on the CF's clock (TIME): run later,
             the call changes nothing and gets {2345} (_fence.lua)

  Output:
    {code}   2085 not defined (no gen given), 2052 deleted (gen given), 2041 generation
             changed, 2016 get inhibited
    {code, reports, depth_event, discarded}  2033 no message, 2034 no message under cursor, -1
             call again (a batch of expired messages was discarded); reports = expiration
             reports queued by this call; depth_event 2225 when its discards fired Queue Depth
             Low; discarded = expired messages this call discarded
    {code, md, data, data_length, backout_count, persistent, cursor, depth_after, depth_before,
     available_after, id, syncpoint, expiry_ms, reports, depth_event, service_event, discarded}
             code 0, 2079 (truncated, accepted) or 2080 (truncated, not accepted: nothing changed,
             data is as much of the message as fits the buffer); cursor = the message's score16; syncpoint 1 when the get is in the
             unit of work (data kept until commit); expiry_ms the message's expiry time, 0 none.
]]
--@include _helpers.lua
--@include _fence.lua
--@include _get.lua

local refused = refusal(KEYS[5], ARGV[19], ARGV[20], ARGV[21])
if refused then return { refused } end

return get_message(
  { ctl = KEYS[1], uow = KEYS[2], uows = KEYS[3], held = KEYS[4], token = ARGV[18],
    qp = ARGV[1], name = ARGV[2], qm = ARGV[3],
    hconn = ARGV[4], gen = ARGV[5], mode = ARGV[6], sync = ARGV[7], mid = ARGV[8], cid = ARGV[9],
    cursor = ARGV[10], buflen = ARGV[11], accept = ARGV[12], now = ARGV[13], register = ARGV[14],
    sp = ARGV[15], perf = ARGV[16], select = ARGV[17] })
