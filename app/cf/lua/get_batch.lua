#!lua flags=allow-oom
--[[
  MQGET (destructive or browse) of up to N messages in one call (the get-batch verb): each one in
  turn exactly as get.lua gets one (_get.lua), taking only what is available now. A browse goes
  on from each message it returned (BROWSE_FIRST, then as BROWSE_NEXT). The batch ends at N
  messages, when no further message matches, or before a message longer than the buffer that
  may not be truncated (it stays on the queue; only when it is the first does the call fail).

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
    ARGV[20] caller: queue manager name
    ARGV[21] caller: its incarnation (a fenced one gets {2009} and nothing changes)
    ARGV[22] caller: deadline, ms since the epoch on the CF's clock (TIME): run later,
             the call changes nothing and gets {2345} (_fence.lua)

  Output:
    {code, reports, depth_event, discarded, md, data, data_length, backout_count, persistent,
     cursor, depth_after, depth_before, available_after, id, syncpoint, expiry_ms, reason,
     service_event, ...}
             code: 0 when at least one message was returned; else get.lua's code for the first
             message: 2085, 2052, 2041, 2016, 2033, -1 (call again: a batch of expired messages
             was discarded) or 2080 (the first message is too big: its group follows, with
             reason 2080 and empty data; nothing changed). reports, discarded: expiration
             reports queued and expired messages discarded by the whole call; depth_event 2225
             when the call fired Queue Depth Low (at most once: only a put switches it on again).
             Then one group per message, in delivery order: get.lua's message fields, reason 0
             or 2079 (truncated, accepted) and the service interval event that get fired.
]]
--@include _helpers.lua
--@include _fence.lua
--@include _get.lua

local refused = refusal(KEYS[5], ARGV[20], ARGV[21], ARGV[22])
if refused then return { refused } end

local q = { ctl = KEYS[1], uow = KEYS[2], uows = KEYS[3], held = KEYS[4], token = ARGV[18],
            qp = ARGV[1], name = ARGV[2], qm = ARGV[3],
            hconn = ARGV[4], gen = ARGV[5], mode = ARGV[6], sync = ARGV[7], mid = ARGV[8], cid = ARGV[9],
            cursor = ARGV[10], buflen = ARGV[11], accept = ARGV[12], now = ARGV[13], register = ARGV[14],
            sp = ARGV[15], perf = ARGV[16], select = ARGV[17] }
local most = tonumber(ARGV[19])
local browse = q.mode == "BROWSE_FIRST" or q.mode == "BROWSE_NEXT"
local code, reports, depth_event, discarded = 0, 0, 0, 0
local out = { 0, 0, 0, 0 }
local count = 0

local function add_group(r, reason)
  for j = 2, 13 do out[#out + 1] = r[j] end
  out[#out + 1] = reason
  out[#out + 1] = r[16]
end

while count < most do
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
    count = count + 1
    if browse then
      q.mode, q.cursor = "BROWSE_NEXT", r[7]  -- the browse goes on after this message
    end
    q.register = "0"  -- later misses need no waiter: the call returns what it has
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
