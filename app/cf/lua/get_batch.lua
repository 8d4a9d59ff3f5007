#!lua flags=allow-oom
--[[
  MQGET (destructive or browse) of up to N messages in one call (the get-batch verb): each one in
  turn exactly as get.lua gets one (_get.lua), taking only what is available now. A browse goes
  on from each message it returned (BROWSE_FIRST, then as BROWSE_NEXT). The batch ends at N
  messages, when no further message matches, or before a message longer than the buffer that
  may not be truncated (it stays on the queue; only when it is the first does the call fail),
  or before a message whose data would take the data returned past the byte budget (it stays
  on the queue, untouched: the budget is checked before a message is taken, so a batch never
  takes a message it does not return).

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
    ARGV[6]  mode: GET | BROWSE_FIRST | BROWSE_NEXT
    ARGV[7]  syncpoint: YES | NO | IF_PERSISTENT (ignored when browsing)
    ARGV[8]  match msg_id (upper-case hex), "" = any (applies to every message)
    ARGV[9]  match correl_id, "" = any
    ARGV[10] browse cursor: score16 of the last browsed message, "" = none
    ARGV[11] buffer length in bytes of each message, -1 = unlimited
    ARGV[12] accept truncated messages: "1" / "0"
    ARGV[13] now, ms since the epoch
    ARGV[14] waiter registration ms (as get.lua's; only when no message at all matches)
    ARGV[15] structure prefix "{tag}:" (expiration reports are queued there)
    ARGV[16] performance events: "S" shared, "E" private with PERFMEV enabled, "D" disabled
    ARGV[17] group and token selection, "" none (_get.lua's `select`; a batch under
             MQGMO_LOGICAL_ORDER is refused by the queue manager before it comes here)
    ARGV[18] call token of a destructive batch outside syncpoint, "" none (get.lua's ARGV[18]:
             every message it gets is held under that one token)
    ARGV[19] most messages to return, >= 1
    ARGV[20] byte budget: the most data bytes (after truncation) the returned messages may hold
             together, -1 = no limit
    ARGV[21] "1": the budget binds the call's first message too (the rest of a batch whose first
             message a waiting get returned); "0": the first message is returned whatever its
             length (a batch never ends empty because of its budget)
    ARGV[22] caller: queue manager name
    ARGV[23] caller: its incarnation (a fenced one gets {2009} and nothing changes)
    ARGV[24] caller: deadline, ms since the epoch on the CF's clock (TIME): run later,
             the call changes nothing and gets {2345} (_fence.lua)

  Output:
    {code, reports, depth_event, discarded, md, data, data_length, backout_count, persistent,
     cursor, depth_after, depth_before, available_after, id, syncpoint, expiry_ms, reason,
     service_event, ...}
             code: 0 when at least one message was returned; else get.lua's code for the first
             message: 2085, 2052, 2041, 2016, 2033, -1 (call again: a batch of expired messages
             was discarded) or 2080 (the first message is too big: its group follows, with
             reason 2080 and as much of its data as fits the buffer; nothing changed). reports, discarded: expiration
             reports queued and expired messages discarded by the whole call; depth_event 2225
             when the call fired Queue Depth Low (at most once: only a put switches it on again).
             Then one group per message, in delivery order: get.lua's message fields, reason 0
             or 2079 (truncated, accepted) and the service interval event that get fired.
]]
--@include _helpers.lua
--@include _fence.lua
--@include _get.lua

local refused = refusal(KEYS[5], ARGV[22], ARGV[23], ARGV[24])
if refused then return { refused } end

local q = { ctl = KEYS[1], uow = KEYS[2], uows = KEYS[3], held = KEYS[4], token = ARGV[18],
            qp = ARGV[1], name = ARGV[2], qm = ARGV[3],
            hconn = ARGV[4], gen = ARGV[5], mode = ARGV[6], sync = ARGV[7], mid = ARGV[8], cid = ARGV[9],
            cursor = ARGV[10], buflen = ARGV[11], accept = ARGV[12], now = ARGV[13], register = ARGV[14],
            sp = ARGV[15], perf = ARGV[16], select = ARGV[17] }
local most = tonumber(ARGV[19])
local budget = tonumber(ARGV[20])
local budget_first = ARGV[21] == "1"
local used = 0  -- data bytes of the messages returned so far
local count = 0

-- Whether a message returning `size` data bytes is past the budget (then the batch ends before it).
local function past_budget(size)
  return budget >= 0 and (count > 0 or budget_first) and used + size > budget
end
local browse = q.mode == "BROWSE_FIRST" or q.mode == "BROWSE_NEXT"
local code, reports, depth_event, discarded = 0, 0, 0, 0
local out = { 0, 0, 0, 0 }

local function add_group(r, reason)
  for j = 2, 13 do out[#out + 1] = r[j] end
  out[#out + 1] = reason
  out[#out + 1] = r[16]
end

--[[
  The common batch, a destructive get of the next messages with no selection (no msg_id,
  correl_id, group or token; no service interval events, which a private queue's PERFMEV gives
  per get): the same messages, replies and final state as get_message called once per message,
  with the queue's attributes read once, the messages read and removed with one command per
  key, counters and statistics written once. Writes are buffered until the end, or until an
  expired message is discarded (discard_expired reads and writes the queue's depth) or more
  candidates are read. Returns nothing: it fills out, count, code, reports, depth_event,
  discarded as the general loop below does.
]]
local function fast_batch()
  local ctl, qp, qm, now = q.ctl, q.qp, q.qm, tonumber(q.now)
  local a = redis.call("HMGET", ctl, "gen", "get", "depth")
  if not a[1] then
    code = (q.gen == "") and 2085 or 2052
    return
  end
  if q.gen ~= "" and a[1] ~= q.gen then code = 2041 return end
  if a[2] == "DISABLED" then code = 2016 return end
  local depth = tonumber(a[3]) or 0
  local idx = qp .. "idx"
  local avail = redis.call("ZCARD", idx)
  local buflen, accept = tonumber(q.buflen), q.accept
  local DISCARD_BATCH = 500  -- as _get.lua's: at most so many expired messages per message's search
  local discards, searching = 0, 0  -- expired messages discarded: by the call, since the last taken
  -- buffered writes: index entries, data, the unit of work (flushed together), held ids
  local function buffers()
    return { idx = {}, mi = {}, ci = {}, gi = {}, md = {}, body = {}, exp = {}, uow = {}, gone = 0 }
  end
  local b = buffers()
  local held = {}
  local syncs = 0

  local function push(t, v) t[#t + 1] = v end
  local function flush()
    if #b.idx > 0 then redis.call("ZREM", idx, unpack(b.idx)) end
    if #b.mi > 0 then redis.call("ZREM", qp .. "mi", unpack(b.mi)) end
    if #b.ci > 0 then redis.call("ZREM", qp .. "ci", unpack(b.ci)) end
    if #b.gi > 0 then redis.call("ZREM", qp .. "gi", unpack(b.gi)) end
    if #b.md > 0 then  -- delete_data's, for the messages deleted now
      redis.call("ZREM", qp .. "pend", unpack(b.md))
      redis.call("HDEL", qp .. "md", unpack(b.md))
      redis.call("HDEL", qp .. "meta", unpack(b.md))
    end
    if #b.body > 0 then redis.call("HDEL", qp .. "body", unpack(b.body)) end
    if #b.exp > 0 then redis.call("ZREM", qp .. "exp", unpack(b.exp)) end
    if b.gone > 0 then redis.call("HINCRBY", ctl, "depth", -b.gone) end
    if #b.uow > 0 then
      redis.call("HINCRBY", ctl, "uncom", #b.uow)
      redis.call("RPUSH", q.uow, unpack(b.uow))
    end
    b = buffers()
  end

  local stop = false
  while count < most and not stop do
    local ids = redis.call("ZRANGE", idx, 0, most - count - 1)
    if #ids == 0 then break end
    local metas = redis.call("HMGET", qp .. "meta", unpack(ids))
    local mds = redis.call("HMGET", qp .. "md", unpack(ids))
    local bodies = redis.call("HMGET", qp .. "body", unpack(ids))
    local expired_seen = false
    for i = 1, #ids do
      local id = ids[i]
      local m = parse_meta(metas[i])
      if expired(m, now) then
        -- Discarded there and then, as get_message does (the search goes on past it).
        flush()
        depth = discard_expired(q.sp, qp, ctl, id, m, qm)
        avail = avail - 1
        discards, searching = discards + 1, searching + 1
        if m.rep ~= "0" then reports = reports + 1 end
        expired_seen = true
        if searching >= DISCARD_BATCH then
          if count == 0 then code = -1 end  -- call again (as get.lua's -1)
          stop = true
          break
        end
      else
        local md = mds[i]
        local truncated = buflen >= 0 and m.len > buflen
        if truncated and accept ~= "1" then
          -- MQRC_TRUNCATED_MSG_FAILED: the message stays; the batch ends before it.
          if count == 0 then
            code = 2080
            add_group({ 2080, md, message_data(qp, id, m, buflen, true, bodies[i]), m.len, m.bo, tonumber(m.pers), m.score, depth, depth, avail, id, 0, m.exp,
                        0, 0, 0, 0 }, 2080)
          end
          stop = true
          break
        end
        local size = truncated and buflen or m.len
        if past_budget(size) then
          stop = true  -- the message stays where it is, untouched; the batch ends before it
          break
        end
        used = used + size
        local data = message_data(qp, id, m, buflen, truncated, bodies[i])
        -- Destructive: out of the indexes, depth down (IBM CURDEPTH).
        push(b.idx, id)
        if m.mid ~= "" then push(b.mi, m.mid .. ":" .. m.score .. ":" .. id) end
        if m.cid ~= "" then push(b.ci, m.cid .. ":" .. m.score .. ":" .. id) end
        if m.grp and m.grp ~= "" then push(b.gi, m.grp .. ":" .. m.score .. ":" .. id) end
        b.gone = b.gone + 1
        local depth_after = depth - 1
        local sync = q.sync == "YES" or (q.sync == "IF_PERSISTENT" and m.pers == "1")
        if sync then
          push(b.uow, "G:" .. id .. ":" .. q.name)
          syncs = syncs + 1
        elseif q.token ~= "" then
          push(held, id)  -- held under the call's token (held.lua), as get_message holds it
        else
          reports = reports + delivery_report(q.sp, qp, id, m)  -- COD, before the data goes
          push(b.md, id)
          if m.exp ~= "0" then push(b.exp, id) end
          if m.big == "1" then
            redis.call("UNLINK", qp .. "big:" .. id)
            redis.call("SREM", qp .. "bigs", id)
          else
            push(b.body, id)
          end
        end
        out[#out + 1] = md
        out[#out + 1] = data
        out[#out + 1] = m.len
        out[#out + 1] = m.bo
        out[#out + 1] = tonumber(m.pers)
        out[#out + 1] = m.score
        out[#out + 1] = depth_after
        out[#out + 1] = depth
        out[#out + 1] = avail - 1
        out[#out + 1] = id
        out[#out + 1] = sync and 1 or 0
        out[#out + 1] = m.exp
        out[#out + 1] = truncated and 2079 or 0
        out[#out + 1] = 0  -- no service interval event (not PERFMEV's private queue)
        depth, avail = depth_after, avail - 1
        count, searching = count + 1, 0
      end
    end
    -- Fewer candidates than asked and none expired: the queue has no more.
    if not expired_seen then break end
    flush()  -- the next candidates are read from the indexes as they are now
  end
  if count == 0 and code == 0 then
    -- Nothing to return: no_message's waiter registration, then 2033.
    local w = tonumber(q.register)
    if w > 0 then
      local wk = qp .. "waiters"
      if redis.call("PTTL", wk) < w then redis.call("SET", wk, "1", "PX", w) end
    end
    code = 2033
  end
  flush()
  if #held > 0 then
    local entry = redis.call("HGET", q.held, q.token)
    redis.call("HSET", q.held, q.token, (entry and (entry .. ",") or (q.name .. ":")) .. table.concat(held, ","))
  end
  if syncs > 0 then redis.call("SADD", q.uows, qm .. ":" .. q.hconn) end
  if count > 0 then
    redis.call("HINCRBY", ctl, stat_field(qm, "deq"), count)
    redis.call("HSET", ctl, stat_field(qm, "lastget"), q.now)
  end
  -- Queue Depth Low: the depth only fell during the call, so its last value decides (as the
  -- first get or discard that reached the threshold would have: the event then switched off).
  if count > 0 or discards > 0 then
    local ev = depth_low(ctl, q.perf, depth)
    if ev ~= 0 then depth_event = ev end
  end
  discarded = discarded + discards
end

if q.mode == "GET" and q.select == "" and q.mid == "" and q.cid == "" and q.perf ~= "E" then
  fast_batch()
  out[1], out[2], out[3], out[4] = code, reports, depth_event, discarded
  return out
end

while count < most do
  -- get_message returns -2 (nothing taken, nothing moved) for a message past the budget
  q.budget = (budget >= 0 and (count > 0 or budget_first)) and (budget - used) or nil
  local r = get_message(q)
  local c = r[1]
  if #r == 4 then
    reports, discarded = reports + r[2], discarded + r[4]
    if r[3] ~= 0 then depth_event = r[3] end
  elseif #r == 17 then
    reports, discarded = reports + r[14], discarded + r[17]
    if r[15] ~= 0 then depth_event = r[15] end
  end
  if c == 0 or c == 2079 then
    add_group(r, c)
    used = used + #r[3]
    count = count + 1
    if browse then
      q.mode, q.cursor = "BROWSE_NEXT", r[7]  -- the browse goes on after this message
    end
    q.register = "0"  -- later misses need no waiter: the call returns what it has
  elseif c == -2 then
    if count == 0 then code = 2033 end  -- (only with ARGV[21] "1") nothing within the budget
    break
  else
    if count == 0 then
      code = c
      if c == 2080 then add_group(r, c) end
    end
    break
  end
end

out[1], out[2], out[3], out[4] = code, reports, depth_event, discarded
return out
