#!lua flags=allow-oom
--[[
  MQOPEN of a queue by one handle: enforce input exclusivity across the whole group (the opens
  live in the structure, so every QM sees every other QM's counts), count the open, record the
  handle so a peer can undo a failed QM's opens.

  Input:
    KEYS[1]  {tag}:q:<NAME>:ctl
    KEYS[2]  {tag}:handles:<QM>           hobj -> "<flags>|<queue>"
    KEYS[3]  {tag}:fence                  incarnations fenced by peer recovery (_fence.lua)

    ARGV[1]  structure prefix "{tag}:"
    ARGV[2]  queue name
    ARGV[3]  queue manager name
    ARGV[4]  hobj
    ARGV[5]  flags: I input shared, X input exclusive, O output, B browse, Q inquire, S set
    ARGV[6]  expected definition generation, "" = do not check
    ARGV[7]  caller: queue manager name
    ARGV[8]  caller: its incarnation (a fenced one gets {2009} and nothing changes)
    ARGV[9]  caller: deadline, ms since the epoch on the CF's clock (TIME): run later,
             the call changes nothing and gets {2345} (_fence.lua)

  Output:
    {code}   2085 not defined, 2041 generation changed, 2042 in use (exclusivity),
             2019 hobj already records a different open
    {0, gen, ipprocs, opprocs, reopened}   group-wide counts after; reopened 1 when this hobj
             was already open with the same flags (nothing counted twice)
]]
--@include _helpers.lua
--@include _fence.lua

local refused = refusal(KEYS[3], ARGV[7], ARGV[8], ARGV[9])
if refused then return { refused } end

local a = redis.call("HMGET", KEYS[1], "gen", "ipprocs", "excl")
if not a[1] then return { 2085 } end
if ARGV[6] ~= "" and ARGV[6] ~= a[1] then return { 2041 } end
local flags = ARGV[5]
local record = flags .. "|" .. ARGV[2]
local existing = redis.call("HGET", KEYS[2], ARGV[4])
if existing then
  if existing ~= record then return { 2019 } end
else
  if string.find(flags, "X", 1, true) and (tonumber(a[2]) or 0) > 0 then return { 2042 } end
  if string.find(flags, "I", 1, true) and (tonumber(a[3]) or 0) > 0 then return { 2042 } end
  count_open(ARGV[1], ARGV[2], ARGV[3], flags, 1)
  redis.call("HSET", KEYS[2], ARGV[4], record)
end
local c = redis.call("HMGET", KEYS[1], "ipprocs", "opprocs")
return { 0, tonumber(a[1]), tonumber(c[1]) or 0, tonumber(c[2]) or 0, existing and 1 or 0 }
