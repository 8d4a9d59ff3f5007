--[[
  Shared fragment, not a script: pasted into a script where it says `--@include _helpers.lua`
  (app/cf/scripts.py does the pasting). Everything here is `local`.

  Per-queue keys, relative to the queue key prefix qp = "{tag}:q:<NAME>:":
    ctl      hash        runtime attributes + counters (depth, seq, gen, uncom, ipprocs, opprocs,
                         excl, handles), and each QM's statistics as "st:<QM>:<stat>" (stat_field):
                         kept with the counters a put or get writes anyway, they cost those
                         calls no command of their own
    idx      sorted set  committed, available messages: member = id (decimal seq), score = ordering
    mi       sorted set  msg_id match index,   all scores 0, member "<hex48>:<score16>:<id>"
    ci       sorted set  correl_id match index, same shape (only non-zero ids are indexed)
    md       hash        id -> MQMD JSON (opaque, made by Python)
    body     hash        id -> message data (<= 64512 bytes)
    big:<id> string      message data > 64512 bytes (the z/OS offload)
    bigs     set         ids that have a big:<id> key (so delete/clear never scan)
    meta     hash        id -> packed metadata, see parse_meta
    exp      sorted set  id -> expiry time (ms): only messages put with an expiry (the scan index)
    gi       sorted set  group index, all scores 0, member "<grp>:<score16>:<id>" of committed
                         available messages in a group or segmented (grp below); sorted by group
                         id, then sequence number, then offset
    waiters  string      exists (with a PEXPIRE) while some getter waits for a message
    opens    hash        "<QM>:<kind>" -> open count

  Ordering score = (9 - p) * 2^49 + seq, exact in a double (< 2^53); written as a 16-digit
  zero-padded decimal ("score16") wherever it is used as a string, so that lexicographic order
  equals numeric order in the match indexes and the browse cursor round-trips exactly.
]]

local PRIO_UNIT = 562949953421312   -- 2^49: room for 2^49 sequence numbers per priority
local BIG_LIMIT = 64512             -- 63 KB: larger bodies need offload on a z/OS CF structure

-- Integers as plain decimal (tostring would print 14 significant digits in exponent form).
local function fmt_int(x)
  return string.format("%.0f", x)
end

local function score16(x)
  return string.format("%016.0f", x)
end

-- A queue manager's statistic in the queue's ctl hash (enq, deq, hiq, lastput, lastget, expired,
-- reset); status.lua gives them back apart from the attributes.
local function stat_field(qmgr, stat)
  return "st:" .. qmgr .. ":" .. stat
end

--[[ meta value: "<score16>|<persistent 0/1>|<backout count>|<big 0/1>|<data length>|<put ms>|<msg_id hex or empty>|<correl_id hex or empty>|<exp>|<rep>|<rq>[|<grp>]" ]]
-- grp (only for a message in a group or a segment; absent otherwise, so other messages pay
-- nothing): "<group_id hex48>:<msg_seq_number 10 digits>:<offset 10 digits>:<L|G|S>", L the
-- last message of its group, G another message of a group, S a segment of a message in no group.
-- exp: expiry time in ms since the epoch, "0" = unlimited; rep: the reports the queue manager
-- makes for the message (app/core/reports.py report_code), expiration + 4 * COD + 16 * COA,
-- each 0 none, 1 plain, 2 _WITH_DATA (first 100 bytes), 3 _WITH_FULL_DATA ("0": none at all);
-- rq: the queue manager a report goes to (the message's ReplyToQMgr).
local function parse_meta(s)
  local sc, pers, bo, big, len, putms, mid, cid, exp, rep, rq, grp =
    string.match(s, "^(%d+)|(%d)|(%d+)|(%d)|(%d+)|(%d+)|(%x*)|(%x*)|(%d+)|(%d+)|([^|]*)|?([%x:LGS]*)$")
  return { score = sc, pers = pers, bo = tonumber(bo), big = big, len = tonumber(len),
           putms = putms, mid = mid, cid = cid, exp = exp, rep = rep, rq = rq, grp = grp }
end

local function make_meta(m)
  local s = table.concat({ m.score, m.pers, fmt_int(m.bo), m.big, fmt_int(m.len), m.putms,
                           m.mid, m.cid, m.exp, m.rep, m.rq }, "|")
  if m.grp and m.grp ~= "" then s = s .. "|" .. m.grp end
  return s
end

local function expired(m, now)
  return m.exp ~= "0" and tonumber(m.exp) <= now
end

-- Make a message visible: delivery index and match indexes.
local function index_add(qp, id, m)
  redis.call("ZADD", qp .. "idx", m.score, id)
  if m.mid ~= "" then
    redis.call("ZADD", qp .. "mi", 0, m.mid .. ":" .. m.score .. ":" .. id)
  end
  if m.cid ~= "" then
    redis.call("ZADD", qp .. "ci", 0, m.cid .. ":" .. m.score .. ":" .. id)
  end
  if m.grp and m.grp ~= "" then
    redis.call("ZADD", qp .. "gi", 0, m.grp .. ":" .. m.score .. ":" .. id)
  end
end

local function index_remove(qp, id, m)
  redis.call("ZREM", qp .. "idx", id)
  if m.mid ~= "" then
    redis.call("ZREM", qp .. "mi", m.mid .. ":" .. m.score .. ":" .. id)
  end
  if m.cid ~= "" then
    redis.call("ZREM", qp .. "ci", m.cid .. ":" .. m.score .. ":" .. id)
  end
  if m.grp and m.grp ~= "" then
    redis.call("ZREM", qp .. "gi", m.grp .. ":" .. m.score .. ":" .. id)
  end
end

-- Forget a message's data (it is no longer in any index).
local function delete_data(qp, id, m)
  redis.call("ZREM", qp .. "pend", id)
  redis.call("HDEL", qp .. "md", id)
  redis.call("HDEL", qp .. "meta", id)
  if m.exp ~= "0" then redis.call("ZREM", qp .. "exp", id) end
  if m.big == "1" then
    redis.call("UNLINK", qp .. "big:" .. id)
    redis.call("SREM", qp .. "bigs", id)
  else
    redis.call("HDEL", qp .. "body", id)
  end
end

-- ---- Confirm-on-arrival and confirm-on-delivery reports (app/core/reports.py) ----
-- How much of one kind of report m asks for (unit 1 expiration, 4 COD, 16 COA): 0 none,
-- 1 no data, 2 the first 100 bytes, 3 all the data. A message asking for none costs one compare.
local function rep_width(m, unit)
  if m.rep == "0" then return 0 end
  return math.floor(tonumber(m.rep) / unit) % 4
end

-- Queue a report of kind "A" (COA) or "D" (COD) on message id for the queue manager that sends
-- it (m.rq), on the same list as expiration reports, as "<kind><len of md>:<md><data>".
local function queue_report(sp, qp, id, m, kind, width)
  local md = redis.call("HGET", qp .. "md", id)
  local data = ""
  if width > 1 then
    if m.big == "1" then data = redis.call("GET", qp .. "big:" .. id)
    else data = redis.call("HGET", qp .. "body", id) end
    if width == 2 then data = string.sub(data, 1, 100) end
  end
  redis.call("RPUSH", sp .. "expreports:" .. m.rq, kind .. #md .. ":" .. md .. data)
  return 1
end

-- COA: the message is now on its destination queue (a put, or the commit of one). Returns the
-- number of reports queued (0 or 1).
local function arrival_report(sp, qp, id, m)
  local width = rep_width(m, 16)
  if width == 0 then return 0 end
  return queue_report(sp, qp, id, m, "A", width)
end

-- COD: an application got the message destructively (outside a unit of work, or its unit of
-- work commits); before its data is deleted. Returns the number of reports queued (0 or 1).
local function delivery_report(sp, qp, id, m)
  local width = rep_width(m, 4)
  if width == 0 then return 0 end
  return queue_report(sp, qp, id, m, "D", width)
end

-- Wake waiting getters on every QM, but only when somebody waits: a put costs one EXISTS.
-- Discard an expired, available message (never part of a unit of work): out of the indexes,
-- data gone, depth down, counted in this QM's statistics; when it asked for an expiration
-- report, the report's material is queued in the structure for the reply-to queue manager
-- ("<len of md>:<md><data>" on list <sp>expreports:<QM>), so no report is lost with a crash.
local function discard_expired(sp, qp, ctl, id, m, qmgr)
  local report = nil
  local width = rep_width(m, 1)
  if width > 0 then
    local md = redis.call("HGET", qp .. "md", id)
    local data = ""
    if width > 1 then
      if m.big == "1" then data = redis.call("GET", qp .. "big:" .. id)
      else data = redis.call("HGET", qp .. "body", id) end
      if width == 2 then data = string.sub(data, 1, 100) end
    end
    report = #md .. ":" .. md .. data
  end
  index_remove(qp, id, m)
  delete_data(qp, id, m)
  local depth = redis.call("HINCRBY", ctl, "depth", -1)
  redis.call("HINCRBY", ctl, stat_field(qmgr, "expired"), 1)
  if report then redis.call("RPUSH", sp .. "expreports:" .. m.rq, report) end
  return depth
end

-- Performance events (docs/ibm-rules.md §1, §2). perf: "S" shared queue (depth events switch whatever
-- the QM's PERFMEV; no service interval events), "E" private queue of a QM with PERFMEV enabled,
-- "D" private queue of a QM with PERFMEV disabled (nothing switches).

-- Queue Depth Low after messages left the queue (a get, or expired messages discarded).
local function depth_low(ctl, perf, depth_after, known)
  if perf == "D" then return 0 end
  -- known: the caller's read of these three fields, when nothing changed them since
  local f = known or redis.call("HMGET", ctl, "qdploev", "qdepthlo", "maxdepth")
  if f[1] == "ENABLED" and depth_after * 100 <= (tonumber(f[2]) or 20) * (tonumber(f[3]) or 999999999) then
    redis.call("HSET", ctl, "qdploev", "DISABLED", "qdphiev", "ENABLED", "qdpmaxev", "ENABLED")
    return 2225
  end
  return 0
end

-- Service interval after a destructive get: High when the service time exceeds QSVCINT, OK when
-- within it (each switching to the other); the timer restarts, or goes OFF on an empty queue.
local function service_interval_get(ctl, perf, now, depth_after)
  if perf ~= "E" then return 0 end
  local f = redis.call("HMGET", ctl, "qsvciev", "qsvcint", "svctimer")
  if not f[1] or f[1] == "NONE" then return 0 end
  local ev = 0
  if f[3] and f[3] ~= "" then
    local elapsed = now - tonumber(f[3])
    local limit = tonumber(f[2]) or 999999999
    if f[1] == "HIGH" and elapsed > limit then
      redis.call("HSET", ctl, "qsvciev", "OK")
      ev = 2226
    elseif f[1] == "OK" and elapsed <= limit then
      redis.call("HSET", ctl, "qsvciev", "HIGH")
      ev = 2227
    end
  end
  if depth_after > 0 then
    redis.call("HSET", ctl, "svctimer", fmt_int(now))
  else
    redis.call("HSET", ctl, "svctimer", "")
  end
  return ev
end

-- Triggering (docs/ibm-rules.md §3.1): the messages that count are those of priority >= TRIGMPRI, the
-- committed ones on a shared queue, committed and uncommitted ones on a private queue ("pend"
-- holds a private queue's uncommitted puts, by score). Scores of priority p are below
-- (10 - p) * 2^49.
local function trigger_count(qp, trigmpri, private)
  local hi = "(" .. fmt_int((10 - trigmpri) * PRIO_UNIT)
  local n = redis.call("ZCOUNT", qp .. "idx", "-inf", hi)
  if private then n = n + redis.call("ZCOUNT", qp .. "pend", "-inf", hi) end
  return n
end

-- Wake the getters waiting on queue q (prefix qp): a shard notice on the structure's
-- availability channel (in the structure's slot), the queue's name as the message.
local function notify(qp, channel, q)
  if redis.call("EXISTS", qp .. "waiters") == 1 then
    redis.call("SPUBLISH", channel, q)
  end
end

-- Add d (+1/-1) to the open counts of one handle. flags: I input shared, X input exclusive,
-- O output, B browse, Q inquire, S set. Group totals (ipprocs, opprocs, excl, handles) are kept
-- in ctl as well, so the open exclusivity check and the put's trigger info are O(1).
local function count_open(sp, q, qmgr, flags, d)
  local qp = sp .. "q:" .. q .. ":"
  local ctl = qp .. "ctl"
  local opens = qp .. "opens"
  local defined = redis.call("HEXISTS", ctl, "gen") == 1
  local function bump(kind, total)
    local v = redis.call("HINCRBY", opens, qmgr .. ":" .. kind, d)
    if v <= 0 then
      redis.call("HDEL", opens, qmgr .. ":" .. kind)
    end
    if total and defined then
      if redis.call("HINCRBY", ctl, kind, d) < 0 then
        redis.call("HSET", ctl, kind, 0)
      end
    end
  end
  bump("handles", true)
  if string.find(flags, "[IX]") then bump("ipprocs", true) end
  if string.find(flags, "X", 1, true) then bump("excl", true) end
  if string.find(flags, "O", 1, true) then bump("opprocs", true) end
  if string.find(flags, "B", 1, true) then bump("browse", false) end
  if string.find(flags, "Q", 1, true) then bump("inq", false) end
  if string.find(flags, "S", 1, true) then bump("set", false) end
end
