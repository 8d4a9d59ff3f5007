#!lua flags=allow-oom
--[[
  A queue manager joins the group as a new incarnation: it claims its name's heartbeat lease
  unless another live process holds it, and takes an incarnation number higher than any its name
  had before (Redis's clock in ms, or the last one + 1), which is what fences compare.

  Input:
    KEYS[1]  {QSG}:hb:<QM>            heartbeat lease: the holder's instance id, with a TTL
    KEYS[2]  {QSG}:incarnations       hash: queue manager -> its last incarnation number

    ARGV[1]  queue manager name
    ARGV[2]  instance id of the claiming process (unique per join)
    ARGV[3]  lease, ms

  Output:
    {0, incarnation}   claimed
    {1, holder}        another live instance holds the name
]]

local holder = redis.call("GET", KEYS[1])
if holder and holder ~= ARGV[2] then return { 1, holder } end
local t = redis.call("TIME")
local incarnation = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local last = tonumber(redis.call("HGET", KEYS[2], ARGV[1]) or "0")
if incarnation <= last then incarnation = last + 1 end
local text = string.format("%.0f", incarnation)
redis.call("HSET", KEYS[2], ARGV[1], text)
redis.call("SET", KEYS[1], ARGV[2], "PX", ARGV[3])
return { 0, text }
