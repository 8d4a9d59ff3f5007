--[[
  Shared fragment, not a script (include after _helpers.lua): MQPUT of one message to one queue,
  written once for put.lua (one message per call) and put_batch.lua (many, in order, per call).

  put_message(q, msg) validates, stores, counts, makes visible (or enlists in the unit of work),
  updates this QM's statistics and wakes waiting getters, exactly as one MQPUT does. The queue's
  control hash is read again for every message: a batch sees what its earlier messages changed
  (depth, event switches), as the same puts one by one would.

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

  Returns put.lua's Output: {code}, {2053, full_event} or the success list.
]]

local function put_message(q, msg)
  local ctl = q.ctl
  local qp = q.qp
  local a = redis.call("HMGET", ctl, "gen", "put", "maxmsgl", "maxdepth", "msgdlvsq", "defprty",
                       "offload", "depth", "ipprocs", "opprocs", "qdepthhi", "qdphiev", "qdpmaxev",
                       "qsvciev", "qsvcint", "svctimer", "trigger", "trigtype", "trigmpri")
  local perf = q.perf
  if not a[1] then
    if q.gen == "" then return { 2085 } end
    return { 2052 }
  end
  if q.gen ~= "" and a[1] ~= q.gen then return { 2041 } end
  if a[2] == "DISABLED" then return { 2051 } end

  local body = msg.body
  local len = #body
  if len > (tonumber(a[3]) or 4194304) then return { 2030 } end
  local offload = q.offload
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
  local p = tonumber(msg.prio)
  if a[5] == "FIFO" then p = tonumber(a[6]) or 0 end

  local seq = redis.call("HINCRBY", ctl, "seq", 1)
  local id = fmt_int(seq)
  local m = { score = score16((9 - p) * PRIO_UNIT + seq), pers = msg.pers, bo = 0, big = "0",
              len = len, putms = q.now, mid = msg.mid, cid = msg.cid, exp = msg.exp,
              rep = msg.rep, rq = msg.rq, grp = msg.grp }
  if m.exp ~= "0" then
    -- Only expiring messages pay for the scan index (the periodic EXPRYINT scan reads it).
    redis.call("ZADD", qp .. "exp", m.exp, id)
    redis.call("ZADD", q.expq, "LT", m.exp, q.name)
  end

  redis.call("HSET", qp .. "md", id, msg.md)
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
  local qm = q.qm
  local st = qp .. "stats"
  redis.call("HINCRBY", st, qm .. ":enq", 1)
  local hiq = tonumber(redis.call("HGET", st, qm .. ":hiq")) or 0
  if depth_after > hiq then
    redis.call("HSET", st, qm .. ":hiq", depth_after, qm .. ":lastput", q.now)
  else
    redis.call("HSET", st, qm .. ":lastput", q.now)
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
        redis.call("HSET", ctl, "svctimer", q.now)  -- a put to an empty queue starts the timer
      elseif a[14] == "HIGH" and a[16] and a[16] ~= "" and
             tonumber(q.now) - tonumber(a[16]) > (tonumber(a[15]) or 999999999) then
        redis.call("HSET", ctl, "qsvciev", "OK")
        service_event = 2226
      end
    end
  end

  local visible = 0
  if q.sync == "1" then
    -- Invisible to everybody (the putter included) until commit.
    redis.call("HINCRBY", ctl, "uncom", 1)
    redis.call("RPUSH", q.uow, "P:" .. id .. ":" .. q.name)
    redis.call("SADD", q.uows, qm .. ":" .. q.hconn)
  else
    index_add(qp, id, m)
    visible = 1
    notify(qp, q.channel, q.name)
    -- COA (under syncpoint: at commit, _uow.lua); qp is "<structure prefix>q:<name>:"
    if m.rep ~= "0" then arrival_report(string.sub(qp, 1, #qp - #q.name - 3), qp, id, m) end
  end

  -- Triggering: when the message counts (its priority >= TRIGMPRI), the count of messages that
  -- count, before and after, decided here atomically so that racing puts see one transition.
  -- A private queue counts uncommitted messages too (its QM evaluates from this reply); a shared
  -- queue counts committed ones, and every QM of the group evaluates from the published counts.
  local trig_before, trig_after = -1, -1
  if a[17] == "1" and a[18] ~= "NONE" then
    local private = perf ~= "S"
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

  return { 0, depth_after, seq, depth, redis.call("ZCARD", qp .. "idx"),
           tonumber(a[9]) or 0, tonumber(a[10]) or 0, visible, depth_event, service_event,
           trig_before, trig_after, msg.want_meta == "1" and make_meta(m) or "" }
end
