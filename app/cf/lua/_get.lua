--[[
  Shared fragment, not a script (include after _helpers.lua): MQGET (destructive or browse) of
  one message, written once for get.lua (one message per call) and get_batch.lua (several per
  call). Find the first matching message in delivery order through the indexes (never a scan),
  check truncation, remove it or enlist it in the unit of work, update this QM's statistics;
  when nothing matches, register a waiter.

  get_message(q), q holding the call's inputs (get.lua's KEYS and ARGV by name):
    ctl, uow, uows, held the keys (get.lua's KEYS[1..4])
    token                call token of a destructive get outside syncpoint ("" none): the message
                         is held under it (held.lua) instead of deleted
    qp, name, qm, hconn  queue key prefix, queue name, queue manager name, hconn
    gen                  definition generation of the handle, "" = do not check
    mode                 GET | BROWSE_FIRST | BROWSE_NEXT | MSG_UNDER_CURSOR | BROWSE_UNDER_CURSOR
    sync                 YES | NO | IF_PERSISTENT (ignored when browsing)
    mid, cid             match msg_id / correl_id (upper-case hex), "" = any
    cursor               browse cursor: score16 of the last browsed message, "" = none
    buflen, accept       buffer length (-1 unlimited); accept truncated message "1" / "0"
    now, register        now (ms); waiter registration ms (> 0: keep the waiters key alive)
    budget               nil (get.lua), or the data bytes get_batch.lua's batch may still return:
                         a message whose data (after truncation) is longer is neither taken
                         nor browsed, and the reply is {-2, reports, depth_event, discarded}
    sp, perf             structure prefix "{tag}:"; performance-event mode "S" / "E" / "D"
    select               "" (the common case: nothing more), else the group and token selection
                         "<group_id>|<seq>|<offset>|<msg_token>|<logical>|<all>|<mark>": each
                         "" = any; logical "" no MQGMO_LOGICAL_ORDER, "F" logical order with no
                         group in progress (only messages in no group or the first of a group),
                         "N:<group_id>:<seq>" the handle's group in progress (only its message
                         seq + 1); all "1" MQGMO_ALL_MSGS_AVAILABLE (a message of a group only
                         when the whole group is available); mark "1" MQGMO_MARK_SKIP_BACKOUT
                         (the unit-of-work entry is "M:" instead of "G:", see _uow.lua)

  Group selection goes through the group index gi (by group id, then sequence number): a group
  id or a group in progress is one lookup, ALL_MSGS_AVAILABLE two per group (its highest entry
  and its count), a msg_token one ZSCORE. Only a LOGICAL_ORDER get with no group named or in
  progress, and a sequence number or offset matched without a group id, walk the delivery (or
  msg_id/correl_id) index, passing over the messages that do not qualify.

  Returns get.lua's Output: {code}, {code, reports, depth_event, discarded} or the message.
  (2247 MATCH_OPTIONS_ERROR: the next message of the group in progress does not match the
  msg_id/correl_id asked for, IBM's rule for LOGICAL_ORDER.)
]]

-- group index entry "<gid>:<seq10>:<off10>:<flag>" -> gid, seq, offset, flag
local function grp_parts(g)
  local gid, seq, off, flag = string.match(g, "^(%x+):(%d+):(%d+):(%a)")
  return gid, tonumber(seq), tonumber(off), flag
end

-- The data a get returns: all of it, or its first buflen bytes when truncated (an offloaded
-- message's read from its own key). body: its data when the caller read it already (get_batch).
local function message_data(qp, id, m, buflen, truncated, body)
  if truncated and buflen == 0 then return "" end
  if m.big == "1" then
    if truncated then return redis.call("GETRANGE", qp .. "big:" .. id, 0, buflen - 1) end
    return redis.call("GET", qp .. "big:" .. id)
  end
  local data = body or redis.call("HGET", qp .. "body", id)
  if truncated then data = string.sub(data, 1, buflen) end
  return data
end

local function get_message(q)
  local ctl = q.ctl
  local qp = q.qp
  -- with this QM's dequeue count and Queue Depth Low's switch and threshold: the get writes
  -- them back with the depth, in one command
  local a = redis.call("HMGET", ctl, "gen", "get", "depth", stat_field(q.qm, "deq"), "qdploev", "qdepthlo",
                       "maxdepth")
  if not a[1] then
    if q.gen == "" then return { 2085 } end
    return { 2052 }
  end
  if q.gen ~= "" and a[1] ~= q.gen then return { 2041 } end
  if a[2] == "DISABLED" then return { 2016 } end

  local idx = qp .. "idx"
  local mode = q.mode
  q.mark = (q.select ~= "" and string.sub(q.select, -1) == "1") and "1" or ""
  local depth = tonumber(a[3]) or 0

  -- First message in delivery order matching msg_id / correl_id, after the cursor if given.
  local function find(mid, cid, after)
    if mid == "" and cid == "" then
      local r
      if after then
        r = redis.call("ZRANGEBYSCORE", idx, "(" .. after, "+inf", "LIMIT", 0, 1)
      else
        r = redis.call("ZRANGE", idx, 0, 0)
      end
      return r[1]
    end
    local key, val
    if mid ~= "" then key, val = qp .. "mi", mid else key, val = qp .. "ci", cid end
    -- members are "<val>:<score16>:<id>"; ";" sorts right after ":" so "(<val>;" ends the range
    local lo = "[" .. val .. ":"
    if after then lo = "(" .. val .. ":" .. after .. ";" end
    local hi = "(" .. val .. ";"
    local skip = #val + 19
    if mid == "" or cid == "" then
      local r = redis.call("ZRANGEBYLEX", key, lo, hi, "LIMIT", 0, 1)
      if r[1] then return string.sub(r[1], skip) end
      return nil
    end
    -- Both given: walk this msg_id's entries (usually one) and check the correl_id.
    local off = 0
    while true do
      local r = redis.call("ZRANGEBYLEX", key, lo, hi, "LIMIT", off, 100)
      for i = 1, #r do
        local id = string.sub(r[i], skip)
        local m = parse_meta(redis.call("HGET", qp .. "meta", id))
        if m.cid == cid then return id end
      end
      if #r < 100 then return nil end
      off = off + 100
    end
  end

  -- Expired messages are never returned: one that the call would have returned is discarded
  -- there and then (outside any unit of work) and the search goes on (IBM's discard rule: for
  -- a FIFO get every expired message ahead of the first unexpired one; on a priority queue those
  -- of higher priority and the earlier ones of equal priority). At most DISCARD_BATCH per call.
  local DISCARD_BATCH = 500
  local now = tonumber(q.now)
  local sp = q.sp
  local qm = q.qm
  local perf = q.perf
  local reports = 0
  local discards = 0

  local function discard(id, m)
    depth = discard_expired(sp, qp, ctl, id, m, qm)
    discards = discards + 1
    if m.rep ~= "0" then reports = reports + 1 end
  end

  -- z/OS: a message that "would have been removed but has since expired" counts for Queue Depth Low.
  local function after_discards()
    if discards > 0 then return depth_low(ctl, perf, depth) end
    return 0
  end

  -- Nothing matches: 2033, after registering a waiter when the call will wait (keeps the
  -- waiters key alive for that long, so puts publish that a message is available).
  local function no_message()
    local w = tonumber(q.register)
    if w > 0 then
      local wk = qp .. "waiters"
      if redis.call("PTTL", wk) < w then redis.call("SET", wk, "1", "PX", w) end
    end
    return { 2033, reports, after_discards(), discards }
  end


  -- Group, sequence number, offset and msg_token selection (q.select, see the header). Returns
  -- id, m of the first qualifying unexpired message, or nil; or nil, nil, code (2247, or -1:
  -- a batch of expired messages was discarded, call again).
  local function select_message(q, after)
    local gid, seq, off, tok, logical, all, mark =
      string.match(q.select, "^(%x*)|(%d*)|(%d*)|(%x*)|([^|]*)|(%d?)|(%d?)$")
    local gi = qp .. "gi"
    local complete_cache = {}
    local function complete(g)
      local c = complete_cache[g]
      if c ~= nil then return c end
      local last = redis.call("ZREVRANGEBYLEX", gi, "(" .. g .. ";", "[" .. g .. ":", "LIMIT", 0, 1)[1]
      c = false
      if last then
        local _, n, _, flag = grp_parts(last)
        c = flag == "L" and redis.call("ZLEXCOUNT", gi, "[" .. g .. ":", "(" .. g .. ";") == n
      end
      complete_cache[g] = c
      return c
    end
    local want_seq, want_off = tonumber(seq), tonumber(off)
    -- Does an unexpired message qualify (everything but msg_id/correl_id when `ids` is false)?
    local function qualifies(mm, ids)
      if ids and ((q.mid ~= "" and mm.mid ~= q.mid) or (q.cid ~= "" and mm.cid ~= q.cid)) then return false end
      local g, s, o, flag = "", 1, 0, ""
      if mm.grp ~= "" then g, s, o, flag = grp_parts(mm.grp) end
      if gid ~= "" and g ~= gid then return false end
      if want_seq and s ~= want_seq then return false end
      if want_off and o ~= want_off then return false end
      if logical == "F" and (s ~= 1 or o ~= 0) then return false end
      if all == "1" and (flag == "L" or flag == "G") and not complete(g) then return false end
      return true
    end
    local function member_id(member)
      return string.match(member, ":(%d+)$")
    end
    -- One candidate: discard it when expired, else return its meta when it qualifies.
    local function try(cand, ids)
      local mm = parse_meta(redis.call("HGET", qp .. "meta", cand))
      if expired(mm, now) then
        discard(cand, mm)
        return nil, mm
      end
      if qualifies(mm, ids) then return mm, mm end
      return nil, mm
    end

    if string.sub(logical, 1, 2) == "N:" then
      -- The group in progress: only its next message (IBM: match options cannot change that;
      -- a msg_id/correl_id that does not match it is MQRC_MATCH_OPTIONS_ERROR).
      local g, s = string.match(logical, "^N:(%x+):(%d+)$")
      local prefix = g .. ":" .. string.format("%010d", tonumber(s) + 1) .. ":"
      local r = redis.call("ZRANGEBYLEX", gi, "[" .. prefix, "(" .. string.sub(prefix, 1, -2) .. ";", "LIMIT", 0, 1)
      if not r[1] then return nil end
      local cand = member_id(r[1])
      local mm = parse_meta(redis.call("HGET", qp .. "meta", cand))
      if expired(mm, now) then
        discard(cand, mm)
        return nil
      end
      if (q.mid ~= "" and mm.mid ~= q.mid) or (q.cid ~= "" and mm.cid ~= q.cid) then return nil, nil, 2247 end
      return cand, mm
    end

    if tok ~= "" then
      -- MsgToken: the message's id (one lookup); BROWSE_NEXT only beyond the cursor.
      local n = tonumber(tok, 16)
      if not n then return nil end
      local cand = fmt_int(n)
      local zs = redis.call("ZSCORE", idx, cand)
      if not zs then return nil end
      if after and tonumber(zs) <= tonumber(after) then return nil end
      local mm = try(cand, true)
      if mm then return cand, mm end
      return nil
    end

    if gid ~= "" then
      -- A group id: its entries (in sequence order; narrowed to one sequence number when given),
      -- the first in delivery order wins.
      local lo, hi = "[" .. gid .. ":", "(" .. gid .. ";"
      if want_seq then
        local p = gid .. ":" .. string.format("%010d", want_seq) .. ":"
        lo, hi = "[" .. p, "(" .. string.sub(p, 1, -2) .. ";"
      end
      local best, best_m, best_sc = nil, nil, nil
      local offset = 0
      while true do
        local r = redis.call("ZRANGEBYLEX", gi, lo, hi, "LIMIT", offset, 100)
        for i = 1, #r do
          local sc = string.match(r[i], ":(%d+):%d+$")
          if (not after or tonumber(sc) > tonumber(after)) and (not best_sc or tonumber(sc) < best_sc) then
            local cand = member_id(r[i])
            local mm = try(cand, true)
            if mm then best, best_m, best_sc = cand, mm, tonumber(sc) end
          end
        end
        if #r < 100 then break end
        offset = offset + 100
      end
      return best, best_m
    end

    -- Otherwise walk the delivery order (through the msg_id/correl_id index when matched).
    local pos = after
    while true do
      local cand = find(q.mid, q.cid, pos)
      if not cand then return nil end
      local mm, seen = try(cand, false)
      if mm then return cand, mm end
      if discards >= DISCARD_BATCH then return nil, nil, -1 end
      pos = seen.score
    end
  end
  local id, m
  if mode == "MSG_UNDER_CURSOR" or mode == "BROWSE_UNDER_CURSOR" then
    -- The id is the score's low 49 bits; the message must still be available at that score.
    if q.cursor == "" then return { 2034, 0, 0, 0 } end
    local sc = tonumber(q.cursor)
    id = fmt_int(sc % PRIO_UNIT)
    local zs = redis.call("ZSCORE", idx, id)
    if not zs or tonumber(zs) ~= sc then return { 2034, 0, 0, 0 } end
    m = parse_meta(redis.call("HGET", qp .. "meta", id))
    if expired(m, now) then
      discard(id, m)
      return { 2034, reports, after_discards(), discards }
    end
  elseif q.select ~= "" then
    local after = nil
    if mode == "BROWSE_NEXT" and q.cursor ~= "" then after = q.cursor end
    local code
    id, m, code = select_message(q, after)
    if code then return { code, reports, after_discards(), discards } end
    if not id then return no_message() end
  else
    local after = nil
    if mode == "BROWSE_NEXT" and q.cursor ~= "" then after = q.cursor end
    while true do
      id = find(q.mid, q.cid, after)
      if not id then break end
      m = parse_meta(redis.call("HGET", qp .. "meta", id))
      if not expired(m, now) then break end
      discard(id, m)
      if discards >= DISCARD_BATCH then return { -1, reports, after_discards(), discards } end  -- call again
    end
    if not id then return no_message() end
  end

  local md = redis.call("HGET", qp .. "md", id)
  local avail = redis.call("ZCARD", idx)
  local buflen = tonumber(q.buflen)
  local truncated = buflen >= 0 and m.len > buflen
  if truncated and q.accept ~= "1" then
    -- MQRC_TRUNCATED_MSG_FAILED: the message stays where it is, the cursor does not move; as
    -- IBM's MQGET, the buffer holds as much of the message as fits (and the MQMD is filled in).
    return { 2080, md, message_data(qp, id, m, buflen, true, nil), m.len, m.bo, tonumber(m.pers), m.score, depth, depth, avail, id, 0, m.exp,
             reports, after_discards(), 0, discards }
  end

  if q.budget and (truncated and buflen or m.len) > q.budget then
    return { -2, reports, after_discards(), discards }  -- past the batch's budget: it stays as it is
  end

  local data = message_data(qp, id, m, buflen, truncated, nil)
  local code = 0
  if truncated then code = 2079 end

  if mode ~= "GET" and mode ~= "MSG_UNDER_CURSOR" then
    return { code, md, data, m.len, m.bo, tonumber(m.pers), m.score, depth, depth, avail, id, 0, m.exp,
             reports, after_discards(), 0, discards }
  end

  -- Destructive: out of the indexes now (nobody else can get it), depth down (IBM CURDEPTH).
  index_remove(qp, id, m)
  local depth_after = depth - 1  -- depth is ctl's (read above, kept by discard)
  local known = { a[5], a[6], a[7] }  -- Queue Depth Low's fields as read above
  redis.call("HSET", ctl, "depth", fmt_int(depth_after), stat_field(qm, "deq"), fmt_int((tonumber(a[4]) or 0) + 1),
             stat_field(qm, "lastget"), q.now)
  local sync = q.sync == "YES" or (q.sync == "IF_PERSISTENT" and m.pers == "1")
  if sync then
    redis.call("HINCRBY", ctl, "uncom", 1)
    -- MARK_SKIP_BACKOUT: an "M:" entry, which an application's MQBACK leaves in place (_uow.lua)
    redis.call("RPUSH", q.uow, (q.mark == "1" and "M:" or "G:") .. id .. ":" .. q.name)
    redis.call("SADD", q.uows, qm .. ":" .. q.hconn)
  elseif q.token ~= "" then
    -- Held under the call's token until the queue manager knows the reply reached it (held.lua:
    -- released, with its COD report, or restored): a lost reply never loses the message.
    local entry = redis.call("HGET", q.held, q.token)
    redis.call("HSET", q.held, q.token, entry and (entry .. "," .. id) or (q.name .. ":" .. id))
  else
    reports = reports + delivery_report(sp, qp, id, m)  -- COD (under syncpoint: at commit, _uow.lua)
    delete_data(qp, id, m)
    known = nil  -- the report may have gone to this very queue and switched its events
  end

  local depth_event = depth_low(ctl, perf, depth_after, known)
  local service_event = service_interval_get(ctl, perf, now, depth_after)
  return { code, md, data, m.len, m.bo, tonumber(m.pers), m.score, depth_after, depth, avail - 1, id,
           sync and 1 or 0, m.exp, reports, depth_event, service_event, discards }
end
