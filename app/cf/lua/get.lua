--[[
  MQGET (destructive or browse) of one message: find the first matching message in delivery
  order through the indexes (never a scan), check truncation, remove it or enlist it in the unit
  of work, update this QM's statistics; when nothing matches, register a waiter.

  Input:
    KEYS[1]  {tag}:q:<NAME>:ctl
    KEYS[2]  {tag}:uow:<QM>:<hconn>       unit-of-work list (written only under syncpoint)
    KEYS[3]  {tag}:uows                   unit-of-work registry
    KEYS[4]  {tag}:fence                  incarnations fenced by peer recovery (_fence.lua)

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
    ARGV[17] caller: queue manager name
    ARGV[18] caller: its incarnation (a fenced one gets {2009} and nothing changes)

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
             data is empty); cursor = the message's score16; syncpoint 1 when the get is in the
             unit of work (data kept until commit); expiry_ms the message's expiry time, 0 none.
]]
--@include _helpers.lua
--@include _fence.lua

if fenced(KEYS[4], ARGV[17], ARGV[18]) then return { FENCED } end

local ctl = KEYS[1]
local qp = ARGV[1]
local a = redis.call("HMGET", ctl, "gen", "get", "depth")
if not a[1] then
  if ARGV[5] == "" then return { 2085 } end
  return { 2052 }
end
if ARGV[5] ~= "" and a[1] ~= ARGV[5] then return { 2041 } end
if a[2] == "DISABLED" then return { 2016 } end

local idx = qp .. "idx"
local mode = ARGV[6]
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
local now = tonumber(ARGV[13])
local sp = ARGV[15]
local qm = ARGV[3]
local perf = ARGV[16]
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

local id, m
if mode == "MSG_UNDER_CURSOR" or mode == "BROWSE_UNDER_CURSOR" then
  -- The id is the score's low 49 bits; the message must still be available at that score.
  if ARGV[10] == "" then return { 2034, 0, 0, 0 } end
  local sc = tonumber(ARGV[10])
  id = fmt_int(sc % PRIO_UNIT)
  local zs = redis.call("ZSCORE", idx, id)
  if not zs or tonumber(zs) ~= sc then return { 2034, 0, 0, 0 } end
  m = parse_meta(redis.call("HGET", qp .. "meta", id))
  if expired(m, now) then
    discard(id, m)
    return { 2034, reports, after_discards(), discards }
  end
else
  local after = nil
  if mode == "BROWSE_NEXT" and ARGV[10] ~= "" then after = ARGV[10] end
  while true do
    id = find(ARGV[8], ARGV[9], after)
    if not id then break end
    m = parse_meta(redis.call("HGET", qp .. "meta", id))
    if not expired(m, now) then break end
    discard(id, m)
    if discards >= DISCARD_BATCH then return { -1, reports, after_discards(), discards } end  -- call again
  end
  if not id then
    local w = tonumber(ARGV[14])
    if w > 0 then
      local wk = qp .. "waiters"
      if redis.call("PTTL", wk) < w then redis.call("SET", wk, "1", "PX", w) end
    end
    return { 2033, reports, after_discards(), discards }
  end
end

local md = redis.call("HGET", qp .. "md", id)
local avail = redis.call("ZCARD", idx)
local buflen = tonumber(ARGV[11])
local truncated = buflen >= 0 and m.len > buflen
if truncated and ARGV[12] ~= "1" then
  -- MQRC_TRUNCATED_MSG_FAILED: the message stays where it is, the cursor does not move.
  return { 2080, md, "", m.len, m.bo, tonumber(m.pers), m.score, depth, depth, avail, id, 0, m.exp,
           reports, after_discards(), 0, discards }
end

local data
if truncated and buflen == 0 then
  data = ""
elseif m.big == "1" then
  if truncated then
    data = redis.call("GETRANGE", qp .. "big:" .. id, 0, buflen - 1)
  else
    data = redis.call("GET", qp .. "big:" .. id)
  end
else
  data = redis.call("HGET", qp .. "body", id)
  if truncated then data = string.sub(data, 1, buflen) end
end
local code = 0
if truncated then code = 2079 end

if mode ~= "GET" and mode ~= "MSG_UNDER_CURSOR" then
  return { code, md, data, m.len, m.bo, tonumber(m.pers), m.score, depth, depth, avail, id, 0, m.exp,
           reports, after_discards(), 0, discards }
end

-- Destructive: out of the indexes now (nobody else can get it), depth down (IBM CURDEPTH).
index_remove(qp, id, m)
local depth_after = redis.call("HINCRBY", ctl, "depth", -1)
local sync = ARGV[7] == "YES" or (ARGV[7] == "IF_PERSISTENT" and m.pers == "1")
if sync then
  redis.call("HINCRBY", ctl, "uncom", 1)
  redis.call("RPUSH", KEYS[2], "G:" .. id .. ":" .. ARGV[2])
  redis.call("SADD", KEYS[3], qm .. ":" .. ARGV[4])
else
  delete_data(qp, id, m)
end
local st = qp .. "stats"
redis.call("HINCRBY", st, qm .. ":deq", 1)
redis.call("HSET", st, qm .. ":lastget", ARGV[13])

local depth_event = depth_low(ctl, perf, depth_after)
local service_event = service_interval_get(ctl, perf, now, depth_after)
return { code, md, data, m.len, m.bo, tonumber(m.pers), m.score, depth_after, depth, avail - 1, id,
         sync and 1 or 0, m.exp, reports, depth_event, service_event, discards }
