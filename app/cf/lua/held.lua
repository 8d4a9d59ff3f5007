#!lua flags=allow-oom
--[[
  Messages held by their call token: what a destructive MQGET outside syncpoint (get.lua,
  get_batch.lua, _get.lua) took off a queue, kept until the queue manager knows whether the
  reply reached it. The get removes the message from every index and counts it off the depth
  at once (nobody else can get it), but keeps its data and records it here under the call's
  token instead of deleting it:

    {tag}:held:<QM>   hash   token "<incarnation>:<n>" -> "<queue>:<id>[,<id>...]"

  RELEASE: the replies arrived (the queue manager gathers the tokens of one event-loop turn's
  answered gets into one call, written before it answers their callers, whose reply it reads
  later: no round trip on a get's path). The messages are delivered: their COD reports are
  queued now and their data deleted.
  RESTORE: the reply never arrived (MQRC_CONNECTION_BROKEN after the get's deadline passed, so
  the get can no longer run), or peer recovery / the queue manager's restart resolves a dead
  incarnation's tokens: the messages go back where they were (same score: priority and
  sequence, MQMD and backout count untouched, as a get that never completed leaves them),
  depth + 1, waiting getters woken. A message whose queue was deleted meanwhile is dropped.
  Tokens already resolved are no-ops, so both are idempotent and need no fence.

  Cost per get outside syncpoint: one HGET and HSET in the get, and in a RELEASE shared with
  the other gets of its turn an HGET, HDEL and what the data deletion always cost; the data
  lives until that call runs.

  Input:
    KEYS[1]  {tag}:held:<QM>

    ARGV[1]  structure prefix "{tag}:"
    ARGV[2]  RELEASE | RESTORE
    ARGV[3]  availability channel of the structure (RESTORE wakes waiting getters there)
    ARGV[4..] tokens; for RESTORE "<N" means every token of an incarnation below N

  Output:
    {messages, reports, gone}   messages released or restored; COD reports queued (RELEASE);
             gone = the tokens named that were no longer held (resolved before: a RELEASE
             that finds one gone was overtaken by peer recovery's RESTORE)
]]
--@include _helpers.lua

local sp = ARGV[1]
local restore = ARGV[2] == "RESTORE"
local channel = ARGV[3]

local tokens = {}
for i = 4, #ARGV do
  local below = string.match(ARGV[i], "^<(%d+)$")
  if below then
    local all = redis.call("HKEYS", KEYS[1])
    for j = 1, #all do
      local inc = tonumber(string.match(all[j], "^(%d+):"))
      if inc and inc < tonumber(below) then tokens[#tokens + 1] = all[j] end
    end
  else
    tokens[#tokens + 1] = ARGV[i]
  end
end

local messages, reports, gone = 0, 0, {}
for i = 1, #tokens do
  local entry = redis.call("HGET", KEYS[1], tokens[i])
  if not entry then
    gone[#gone + 1] = tokens[i]
  else
    redis.call("HDEL", KEYS[1], tokens[i])
    local queue, ids = string.match(entry, "^([^:]+):(.*)$")
    local qp = sp .. "q:" .. queue .. ":"
    local ctl = qp .. "ctl"
    local defined = redis.call("HEXISTS", ctl, "gen") == 1
    local back = 0
    for id in string.gmatch(ids, "%d+") do
      local raw = redis.call("HGET", qp .. "meta", id)
      if raw then
        local m = parse_meta(raw)
        messages = messages + 1
        if restore and defined then
          index_add(qp, id, m)
          back = back + 1
        else
          if not restore then reports = reports + delivery_report(sp, qp, id, m) end
          delete_data(qp, id, m)
        end
      end
    end
    if back > 0 then
      redis.call("HINCRBY", ctl, "depth", back)
      notify(qp, channel, queue)
    end
  end
end
return { messages, reports, gone }
