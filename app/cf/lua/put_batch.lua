#!lua
--[[
  MQPUT of several messages to one queue in one call (the put-batch verb): each message in turn
  exactly as put.lua puts one (_put.lua), stopping at the first one refused. The messages before
  it stay put: visible now, or in the unit of work under syncpoint, as the same puts one by one.
  The queue's attributes are read once and the messages written together (_put.lua).

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
    ARGV[5]  definition generation the handle was opened with, "" = do not check
    ARGV[6]  syncpoint: "1" inside the unit of work, "0" immediately
    ARGV[7]  now, ms since the epoch
    ARGV[8]  availability channel of the queue's structure (SPUBLISHed only when getters wait)
    ARGV[9]  offload override: "1" / "0", "" = use the queue's ctl "offload" attribute
    ARGV[10] performance events: "S" shared, "E" private with PERFMEV enabled, "D" disabled
    ARGV[11] trigger channel of the structure (a shared queue's trigger counts are SPUBLISHed there)
    ARGV[12] caller: queue manager name
    ARGV[13] caller: its incarnation (a fenced one gets {2009} and nothing changes)
    ARGV[14] caller: deadline, ms since the epoch on the CF's clock (TIME): run later,
             the call changes nothing and gets {2345} (_fence.lua)
    ARGV[15..] the messages, 11 values each, in put order: priority 0-9 (resolved), persistent
             "1"/"0", msg_id, correl_id, MQMD JSON, data, expiry time (ms, "0" unlimited),
             expiration report "0"-"3", the queue manager a report goes to, "1"/"0" return the
             stored metadata, group index entry or "" (put.lua's ARGV[7..12], ARGV[16..18], 21
             and 22)

  Output:
    {code, count, full_event, depth_after, seq, depth_before, available_after, ipprocs, opprocs,
     visible, depth_event, service_event, trig_before, trig_after, meta, ...}
             code: 0 when every message was put, else put.lua's failure code for the message that
             stopped the batch (2085, 2052, 2041, 2051, 2030, 2053); count: how many messages
             were put before it; full_event: 2053 when that refusal fired a Queue Full event;
             then one group per message put (put.lua's success fields, in put order).
]]
--@include _helpers.lua
--@include _fence.lua
--@include _put.lua

local refused = refusal(KEYS[5], ARGV[12], ARGV[13], ARGV[14])
if refused then return { refused } end

local q = { ctl = KEYS[1], uow = KEYS[2], uows = KEYS[3], expq = KEYS[4], qp = ARGV[1], name = ARGV[2],
            qm = ARGV[3], hconn = ARGV[4], gen = ARGV[5], sync = ARGV[6], now = ARGV[7],
            channel = ARGV[8], offload = ARGV[9], perf = ARGV[10], trig_channel = ARGV[11] }
-- The queue's attributes are read once for the batch; refused there, no message is put.
local s, code = put_begin(q)
if not s then return { code, 0, 0 } end
local out = { 0, 0, 0 }
local count = 0
for i = 15, #ARGV, 11 do
  local r = put_message(q, s, { prio = ARGV[i], pers = ARGV[i + 1], mid = ARGV[i + 2], cid = ARGV[i + 3],
                                md = ARGV[i + 4], body = ARGV[i + 5], exp = ARGV[i + 6], rep = ARGV[i + 7],
                                rq = ARGV[i + 8], want_meta = ARGV[i + 9],
                                grp = ARGV[i + 10] })
  if r[1] ~= 0 then
    out[1] = r[1]
    out[3] = r[2] or 0
    break
  end
  count = count + 1
  for j = 2, #r do out[#out + 1] = r[j] end
end
put_end(q, s)
out[2] = count
return out
