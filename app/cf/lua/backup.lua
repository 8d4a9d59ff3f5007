#!lua
--[[
  BACKUP CFSTRUCT, one chunk of one queue: the committed persistent messages, read with HSCAN
  over the queue's metadata. A message put under a unit of work still in flight is left out
  (its commit writes its log record after the backup started, so recovery finds it there), as
  is one put less than EXCLINT seconds ago (the log has it too). A message a getter holds in
  an uncommitted get is included: a backout would make it available again.

  Input:
    KEYS[1]  {tag}:uows                   unit-of-work registry of the structure

    ARGV[1]  queue key prefix "{tag}:q:<NAME>:"
    ARGV[2]  queue name
    ARGV[3]  structure prefix "{tag}:"
    ARGV[4]  HSCAN cursor ("0" to start)
    ARGV[5]  HSCAN COUNT
    ARGV[6]  put before this time (ms) to be backed up (the backup's start - EXCLINT)

  Output:
    {cursor, id, meta, md, data, ...}   cursor: the next cursor ("0" at the end); then one
             (id, meta, md = MQMD JSON, data) group per message
]]
--@include _helpers.lua

local qp = ARGV[1]
local queue = ARGV[2]
local sp = ARGV[3]

-- Ids of this queue's uncommitted puts, from every unit of work in the structure.
local uncommitted = {}
local members = redis.call("SMEMBERS", KEYS[1])
for i = 1, #members do
  local ops = redis.call("LRANGE", sp .. "uow:" .. members[i], 0, -1)
  for j = 1, #ops do
    local kind, id, q = string.match(ops[j], "^(%a):(%d+):(.*)$")
    if kind == "P" and q == queue then uncommitted[id] = true end
  end
end

local scanned = redis.call("HSCAN", qp .. "meta", ARGV[4], "COUNT", ARGV[5])
local out = { scanned[1] }
local before = tonumber(ARGV[6])
local pairs_ = scanned[2]
for i = 1, #pairs_, 2 do
  local id, raw = pairs_[i], pairs_[i + 1]
  local m = parse_meta(raw)
  if m.pers == "1" and not uncommitted[id] and tonumber(m.putms) < before then
    local data
    if m.big == "1" then data = redis.call("GET", qp .. "big:" .. id)
    else data = redis.call("HGET", qp .. "body", id) end
    out[#out + 1] = id
    out[#out + 1] = raw
    out[#out + 1] = redis.call("HGET", qp .. "md", id) or ""
    out[#out + 1] = data or ""
  end
end
return out
