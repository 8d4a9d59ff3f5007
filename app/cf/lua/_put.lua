--[[
  Shared fragment, not a script (include after _helpers.lua): MQPUT of messages to one queue,
  written once for put.lua (one message per call) and put_batch.lua (many, in order, per call).

  A call reads the queue's control hash once (put_begin), puts each message in turn
  (put_message: validates, stores, counts, makes visible or enlists in the unit of work, fires
  events, counts for triggering), then writes what its messages changed together (put_end:
  the counters, statistics, the unit of work, expiry index, the wake-up of waiting getters).
  Each message sees what the earlier ones of its call changed (depth, sequence number, event
  switches) as the same puts one by one would: the call keeps them in its state ``s`` and
  writes the switches through at once. A batch thus costs one read of the attributes and one
  multi-member write per key, not a dozen commands per message.

    q    what every message of the call shares:
         ctl, uow, uows, expq  the keys (put.lua's KEYS[1..4])
         qp, name, qm, hconn   queue key prefix, queue name, queue manager name, hconn
         gen                   definition generation of the handle, "" = do not check (MQPUT1)
         sync                  "1" inside the unit of work, "0" immediately
         now, channel          now (ms), availability channel of the queue's structure
         offload               "1" / "0", "" = use the queue's ctl "offload" attribute
         perf, trig_channel    performance-event mode ("S", "E", "D"), structure's trigger channel
    msg  one message:
         prio, pers, mid, cid  priority 0-9 (resolved), persistent "1"/"0", msg_id, correl_id
         md, body              MQMD JSON (stored as given), data
         exp, rep, rq          expiry time (ms, "0" none), reports asked for (parse_meta), their QM
         want_meta             "1": return the stored metadata (logged persistent message)
         grp                   "" not in a group, else the group index entry (_helpers.lua)

  put_begin(q) returns the call's state, or nil and put.lua's failure code (2085, 2052, 2041,
  2051: the same for every message of the call). put_message(q, s, msg) returns put.lua's
  Output for one message: {code}, {2053, full_event} or the success list. put_end(q, s) must
  follow the last put_message of the call (also after a refusal: the messages before it stay).
]]

-- The most arguments one buffered write passes (a Lua unpack is limited to some thousands).
local PUT_WRITE_CHUNK = 2000

-- One command with fixed arguments `head` and then the values of `list`, in chunks.
local function put_write(cmd, key, head, list)
  local n = #list
  local i = 1
  while i <= n do
    local j = math.min(n, i + PUT_WRITE_CHUNK - 1)
    if head then
      redis.call(cmd, key, head, unpack(list, i, j))
    else
      redis.call(cmd, key, unpack(list, i, j))
    end
    i = j + 1
  end
end

local function put_begin(q)
  local a = redis.call("HMGET", q.ctl, "gen", "put", "maxmsgl", "maxdepth", "msgdlvsq", "defprty",
                       "offload", "depth", "ipprocs", "opprocs", "qdepthhi", "qdphiev", "qdpmaxev",
                       "qsvciev", "qsvcint", "svctimer", "trigger", "trigtype", "trigmpri", "seq",
                       stat_field(q.qm, "enq"), stat_field(q.qm, "hiq"))
  if not a[1] then
    if q.gen == "" then return nil, 2085 end
    return nil, 2052
  end
  if q.gen ~= "" and a[1] ~= q.gen then return nil, 2041 end
  if a[2] == "DISABLED" then return nil, 2051 end
  local offload = q.offload
  if offload == "" then offload = a[7] end
  return {
    a = a, offload = offload,
    maxmsgl = tonumber(a[3]) or 4194304, maxdepth = tonumber(a[4]) or 999999999,
    depth = tonumber(a[8]) or 0, seq = tonumber(a[20]) or 0,
    ipprocs = tonumber(a[9]) or 0, opprocs = tonumber(a[10]) or 0,
    count = 0,          -- messages put by the call
    visible = 0,        -- of which committed now
    avail = nil,        -- ZCARD of idx, read at the first message made visible
    min_exp = nil,      -- earliest expiry of the call's messages
    -- writes buffered until put_flush / put_end
    md = {}, body = {}, meta = {}, idx = {}, mi = {}, ci = {}, gi = {}, exp = {}, uow = {},
  }
end

-- Write the buffered messages, their metadata and index entries: before anything reads them
-- back (a COA report, a trigger count) and at the end of the call.
local function put_flush(q, s)
  local qp = q.qp
  if #s.md == 0 then return end
  put_write("HSET", qp .. "md", nil, s.md)
  if #s.body > 0 then put_write("HSET", qp .. "body", nil, s.body) end
  put_write("HSET", qp .. "meta", nil, s.meta)
  if #s.idx > 0 then put_write("ZADD", qp .. "idx", nil, s.idx) end
  if #s.mi > 0 then put_write("ZADD", qp .. "mi", nil, s.mi) end
  if #s.ci > 0 then put_write("ZADD", qp .. "ci", nil, s.ci) end
  if #s.gi > 0 then put_write("ZADD", qp .. "gi", nil, s.gi) end
  s.md, s.body, s.meta, s.idx, s.mi, s.ci, s.gi = {}, {}, {}, {}, {}, {}, {}
end

local function put_message(q, s, msg)
  local ctl = q.ctl
  local qp = q.qp
  local a = s.a
  local perf = q.perf

  local body = msg.body
  local len = #body
  if len > s.maxmsgl then return { 2030 } end
  if len > BIG_LIMIT and s.offload ~= "1" then return { 2030 } end
  local depth = s.depth
  local maxdepth = s.maxdepth
  if depth >= maxdepth then
    -- Queue Full: the event switches itself off and Queue Depth Low on.
    if perf ~= "D" and a[13] == "ENABLED" then
      redis.call("HSET", ctl, "qdpmaxev", "DISABLED", "qdploev", "ENABLED")
      a[13] = "DISABLED"
      return { 2053, 2053 }
    end
    return { 2053, 0 }
  end

  -- FIFO queues order every message at the default priority (IBM's rule when MSGDLVSQ changes).
  local p = tonumber(msg.prio)
  if a[5] == "FIFO" then p = tonumber(a[6]) or 0 end

  local seq = s.seq + 1
  s.seq = seq
  local id = fmt_int(seq)
  local m = { score = score16((9 - p) * PRIO_UNIT + seq), pers = msg.pers, bo = 0, big = "0",
              len = len, putms = q.now, mid = msg.mid, cid = msg.cid, exp = msg.exp,
              rep = msg.rep, rq = msg.rq, grp = msg.grp }
  if m.exp ~= "0" then
    -- Only expiring messages pay for the scan index (the periodic EXPRYINT scan reads it).
    local e = s.exp
    e[#e + 1] = m.exp
    e[#e + 1] = id
    if not s.min_exp or tonumber(m.exp) < s.min_exp then s.min_exp = tonumber(m.exp) end
  end

  local n = #s.md
  s.md[n + 1], s.md[n + 2] = id, msg.md
  if len > BIG_LIMIT then
    m.big = "1"
    redis.call("SET", qp .. "big:" .. id, body)
    redis.call("SADD", qp .. "bigs", id)
  else
    local b = s.body
    b[#b + 1] = id
    b[#b + 1] = body
  end
  local meta = make_meta(m)
  s.meta[n + 1], s.meta[n + 2] = id, meta

  -- CURDEPTH counts uncommitted puts too (IBM), so depth goes up now in both cases.
  local depth_after = depth + 1
  s.depth = depth_after
  s.count = s.count + 1

  -- Queue Depth High (counting uncommitted work, as IBM does) and the service interval.
  local depth_event, service_event = 0, 0
  if perf ~= "D" then
    if a[12] == "ENABLED" and depth_after * 100 >= (tonumber(a[11]) or 80) * maxdepth then
      redis.call("HSET", ctl, "qdphiev", "DISABLED", "qdploev", "ENABLED", "qdpmaxev", "ENABLED")
      a[12], a[13] = "DISABLED", "ENABLED"
      depth_event = 2224
    end
    if perf == "E" and a[14] and a[14] ~= "NONE" then
      if depth == 0 then
        redis.call("HSET", ctl, "svctimer", q.now)  -- a put to an empty queue starts the timer
        a[16] = q.now
      elseif a[14] == "HIGH" and a[16] and a[16] ~= "" and
             tonumber(q.now) - tonumber(a[16]) > (tonumber(a[15]) or 999999999) then
        redis.call("HSET", ctl, "qsvciev", "OK")
        a[14] = "OK"
        service_event = 2226
      end
    end
  end

  -- Committed, available messages after this put: counted once per call (a put adds only its
  -- own message to the delivery index).
  if not s.avail then s.avail = redis.call("ZCARD", qp .. "idx") + #s.idx / 2 end
  local visible = 0
  if q.sync == "1" then
    -- Invisible to everybody (the putter included) until commit.
    s.uow[#s.uow + 1] = "P:" .. id .. ":" .. q.name
  else
    -- Visible: the delivery index and the match indexes (index_add's entries, written together).
    local x = s.idx
    x[#x + 1] = m.score
    x[#x + 1] = id
    if m.mid ~= "" then
      x = s.mi
      x[#x + 1] = 0
      x[#x + 1] = m.mid .. ":" .. m.score .. ":" .. id
    end
    if m.cid ~= "" then
      x = s.ci
      x[#x + 1] = 0
      x[#x + 1] = m.cid .. ":" .. m.score .. ":" .. id
    end
    if m.grp and m.grp ~= "" then
      x = s.gi
      x[#x + 1] = 0
      x[#x + 1] = m.grp .. ":" .. m.score .. ":" .. id
    end
    visible = 1
    s.visible = s.visible + 1
    -- COA (under syncpoint: at commit, _uow.lua); qp is "<structure prefix>q:<name>:"
    if m.rep ~= "0" then
      put_flush(q, s)  -- the report is made from the stored MQMD and data
      arrival_report(string.sub(qp, 1, #qp - #q.name - 3), qp, id, m)
    end
  end
  if visible == 1 then s.avail = s.avail + 1 end
  local avail = s.avail

  -- Triggering: when the message counts (its priority >= TRIGMPRI), the count of messages that
  -- count, before and after, decided here atomically so that racing puts see one transition.
  -- A private queue counts uncommitted messages too (its QM evaluates from this reply); a shared
  -- queue counts committed ones, and every QM of the group evaluates from the published counts.
  local trig_before, trig_after = -1, -1
  if a[17] == "1" and a[18] ~= "NONE" then
    local private = perf ~= "S"
    put_flush(q, s)  -- the counts read the indexes
    if private and q.sync == "1" then redis.call("ZADD", qp .. "pend", m.score, id) end
    local tp = tonumber(a[19]) or 0
    if private then
      if p >= tp then
        trig_after = trigger_count(qp, tp, true)
        trig_before = trig_after - 1
      end
    elseif q.sync ~= "1" then
      -- Every committed put is published, counting or not: a QM that sees the queue open for
      -- input elsewhere evaluates with priority 0 (docs/ibm-rules.md §3.2, note a).
      trig_after = trigger_count(qp, tp, false)
      trig_before = trig_after
      if p >= tp then trig_before = trig_after - 1 end
      redis.call("SPUBLISH", q.trig_channel, q.name .. "|" .. trig_before .. "|" .. trig_after .. "|1")
    end
  end

  return { 0, depth_after, seq, depth, avail, s.ipprocs, s.opprocs, visible, depth_event, service_event,
           trig_before, trig_after, msg.want_meta == "1" and meta or "" }
end

local function put_end(q, s)
  put_flush(q, s)
  local n = s.count
  if n == 0 then return end
  local ctl = q.ctl
  local qp = q.qp
  local qm = q.qm
  -- The counters and this QM's statistics in one write: the depth only rose during the call, so
  -- its last value is the call's highest.
  local enq = (tonumber(s.a[21]) or 0) + n
  local hiq = math.max(tonumber(s.a[22]) or 0, s.depth)
  redis.call("HSET", ctl, "seq", fmt_int(s.seq), "depth", fmt_int(s.depth), stat_field(qm, "enq"), fmt_int(enq),
             stat_field(qm, "hiq"), fmt_int(hiq), stat_field(qm, "lastput"), q.now)
  if #s.exp > 0 then
    put_write("ZADD", qp .. "exp", nil, s.exp)
    redis.call("ZADD", q.expq, "LT", fmt_int(s.min_exp), q.name)
  end
  if #s.uow > 0 then
    redis.call("HINCRBY", ctl, "uncom", #s.uow)
    put_write("RPUSH", q.uow, nil, s.uow)
    redis.call("SADD", q.uows, qm .. ":" .. q.hconn)
  end
  if s.visible > 0 then notify(qp, q.channel, q.name) end  -- one wake-up for the call's messages
end
