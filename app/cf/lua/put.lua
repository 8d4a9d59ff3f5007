--[[
  MQPUT of one message to one queue: validate, store, count, make visible (or enlist in the
  unit of work), update this QM's statistics and wake waiting getters. The hot path: one call.

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
    ARGV[14] availability channel of the queue (published only when getters wait)
    ARGV[15] offload override: "1" / "0", "" = use the queue's ctl "offload" attribute
    ARGV[16] expiry time, ms since the epoch; "0" = unlimited
    ARGV[17] expiration report asked for: "0" none, "1", "2" with 100 bytes, "3" with all data
    ARGV[18] queue manager an expiration report goes to (the ReplyToQMgr)
    ARGV[19] performance events: "S" shared, "E" private with PERFMEV enabled, "D" disabled
    ARGV[20] trigger channel of the group (a shared queue's trigger counts are published there)
    ARGV[21] "1": return the stored metadata (a persistent message the queue manager logs for
             RECOVER CFSTRUCT), "0": return ""
    ARGV[22] caller: queue manager name
    ARGV[23] caller: its incarnation (a fenced one gets {2009} and nothing changes)

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

if fenced(KEYS[5], ARGV[22], ARGV[23]) then return { FENCED } end

local ctl = KEYS[1]
local qp = ARGV[1]
local a = redis.call("HMGET", ctl, "gen", "put", "maxmsgl", "maxdepth", "msgdlvsq", "defprty",
                     "offload", "depth", "ipprocs", "opprocs", "qdepthhi", "qdphiev", "qdpmaxev",
                     "qsvciev", "qsvcint", "svctimer", "trigger", "trigtype", "trigmpri")
local perf = ARGV[19]
if not a[1] then
  if ARGV[5] == "" then return { 2085 } end
  return { 2052 }
end
if ARGV[5] ~= "" and a[1] ~= ARGV[5] then return { 2041 } end
if a[2] == "DISABLED" then return { 2051 } end

local body = ARGV[12]
local len = #body
if len > (tonumber(a[3]) or 4194304) then return { 2030 } end
local offload = ARGV[15]
if offload == "" then offload = a[7] end
if len > BIG_LIMIT and offload ~= "1" then return { 2030 } end
local depth = tonumber(a[8]) or 0
local maxdepth = tonumber(a[4]) or 999999999
if depth >= maxdepth then
  -- Queue Full: the event switches itself off and Queue Depth Low on.
  if perf ~= "D" and a[13] == "ENABLED" then
    redis.call("HSET", ctl, "qdpmaxev", "DISABLED", "qdploev", "ENABLED")
    return { 2053, 2053 }
  end
  return { 2053, 0 }
end

-- FIFO queues order every message at the default priority (IBM's rule when MSGDLVSQ changes).
local p = tonumber(ARGV[7])
if a[5] == "FIFO" then p = tonumber(a[6]) or 0 end

local seq = redis.call("HINCRBY", ctl, "seq", 1)
local id = fmt_int(seq)
local m = { score = score16((9 - p) * PRIO_UNIT + seq), pers = ARGV[8], bo = 0, big = "0",
            len = len, putms = ARGV[13], mid = ARGV[9], cid = ARGV[10], exp = ARGV[16],
            rep = ARGV[17], rq = ARGV[18] }
if m.exp ~= "0" then
  -- Only expiring messages pay for the scan index (the periodic EXPRYINT scan reads it).
  redis.call("ZADD", qp .. "exp", m.exp, id)
  redis.call("ZADD", KEYS[4], "LT", m.exp, ARGV[2])
end

redis.call("HSET", qp .. "md", id, ARGV[11])
if len > BIG_LIMIT then
  m.big = "1"
  redis.call("SET", qp .. "big:" .. id, body)
  redis.call("SADD", qp .. "bigs", id)
else
  redis.call("HSET", qp .. "body", id, body)
end
redis.call("HSET", qp .. "meta", id, make_meta(m))

-- CURDEPTH counts uncommitted puts too (IBM), so depth goes up now in both cases.
local depth_after = redis.call("HINCRBY", ctl, "depth", 1)
local qm = ARGV[3]
local st = qp .. "stats"
redis.call("HINCRBY", st, qm .. ":enq", 1)
local hiq = tonumber(redis.call("HGET", st, qm .. ":hiq")) or 0
if depth_after > hiq then
  redis.call("HSET", st, qm .. ":hiq", depth_after, qm .. ":lastput", ARGV[13])
else
  redis.call("HSET", st, qm .. ":lastput", ARGV[13])
end

-- Queue Depth High (counting uncommitted work, as IBM does) and the service interval.
local depth_event, service_event = 0, 0
if perf ~= "D" then
  if a[12] == "ENABLED" and depth_after * 100 >= (tonumber(a[11]) or 80) * maxdepth then
    redis.call("HSET", ctl, "qdphiev", "DISABLED", "qdploev", "ENABLED", "qdpmaxev", "ENABLED")
    depth_event = 2224
  end
  if perf == "E" and a[14] and a[14] ~= "NONE" then
    if depth == 0 then
      redis.call("HSET", ctl, "svctimer", ARGV[13])  -- a put to an empty queue starts the timer
    elseif a[14] == "HIGH" and a[16] and a[16] ~= "" and
           tonumber(ARGV[13]) - tonumber(a[16]) > (tonumber(a[15]) or 999999999) then
      redis.call("HSET", ctl, "qsvciev", "OK")
      service_event = 2226
    end
  end
end

local visible = 0
if ARGV[6] == "1" then
  -- Invisible to everybody (the putter included) until commit.
  redis.call("HINCRBY", ctl, "uncom", 1)
  redis.call("RPUSH", KEYS[2], "P:" .. id .. ":" .. ARGV[2])
  redis.call("SADD", KEYS[3], qm .. ":" .. ARGV[4])
else
  index_add(qp, id, m)
  visible = 1
  notify(qp, ARGV[14])
end

-- Triggering: when the message counts (its priority >= TRIGMPRI), the count of messages that
-- count, before and after, decided here atomically so that racing puts see one transition.
-- A private queue counts uncommitted messages too (its QM evaluates from this reply); a shared
-- queue counts committed ones, and every QM of the group evaluates from the published counts.
local trig_before, trig_after = -1, -1
if a[17] == "1" and a[18] ~= "NONE" then
  local private = perf ~= "S"
  if private and ARGV[6] == "1" then redis.call("ZADD", qp .. "pend", m.score, id) end
  local tp = tonumber(a[19]) or 0
  if private then
    if p >= tp then
      trig_after = trigger_count(qp, tp, true)
      trig_before = trig_after - 1
    end
  elseif ARGV[6] ~= "1" then
    -- Every committed put is published, counting or not: a QM that sees the queue open for
    -- input elsewhere evaluates with priority 0 (docs/ibm-rules.md §3.2, note a).
    trig_after = trigger_count(qp, tp, false)
    trig_before = trig_after
    if p >= tp then trig_before = trig_after - 1 end
    redis.call("PUBLISH", ARGV[20], ARGV[2] .. "|" .. trig_before .. "|" .. trig_after .. "|1")
  end
end

return { 0, depth_after, seq, depth, redis.call("ZCARD", qp .. "idx"),
         tonumber(a[9]) or 0, tonumber(a[10]) or 0, visible, depth_event, service_event,
         trig_before, trig_after, ARGV[21] == "1" and make_meta(m) or "" }
