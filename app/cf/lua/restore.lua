#!lua
--[[
  RECOVER CFSTRUCT: put recovered messages back on one queue, committed and available, each
  with its original id, metadata (ordering score, backout count, expiry, report options) and
  MQMD. A message already present is left alone, so a repeated batch changes nothing. The
  queue's message ids continue after the highest id recovery saw, so (queue, id) stays unique.

  Input:
    KEYS[1]  {tag}:q:<NAME>:ctl           must exist (the queue's state is defined first)
    KEYS[2]  {tag}:expq                   queues with expiring messages

    ARGV[1]  queue key prefix "{tag}:q:<NAME>:"
    ARGV[2]  queue name
    ARGV[3]  lowest value for the queue's last message id ("seq")
    ARGV[4..] id, meta, MQMD JSON, data, id, meta, ...

  Output:
    {code}            2085 queue not defined
    {0, restored, depth}
]]
--@include _helpers.lua

local ctl = KEYS[1]
local qp = ARGV[1]
if redis.call("HEXISTS", ctl, "gen") == 0 then return { 2085 } end
local seq = tonumber(redis.call("HGET", ctl, "seq")) or 0
if tonumber(ARGV[3]) > seq then redis.call("HSET", ctl, "seq", ARGV[3]) end

local restored = 0
for i = 4, #ARGV, 4 do
  local id, raw, md, data = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  if redis.call("HEXISTS", qp .. "meta", id) == 0 then
    local m = parse_meta(raw)
    redis.call("HSET", qp .. "md", id, md)
    if m.big == "1" then
      redis.call("SET", qp .. "big:" .. id, data)
      redis.call("SADD", qp .. "bigs", id)
    else
      redis.call("HSET", qp .. "body", id, data)
    end
    redis.call("HSET", qp .. "meta", id, raw)
    if m.exp ~= "0" then
      redis.call("ZADD", qp .. "exp", m.exp, id)
      redis.call("ZADD", KEYS[2], "LT", m.exp, ARGV[2])
    end
    index_add(qp, id, m)
    redis.call("HINCRBY", ctl, "depth", 1)
    restored = restored + 1
  end
end
return { 0, restored, tonumber(redis.call("HGET", ctl, "depth")) or 0 }
