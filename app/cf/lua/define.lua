#!lua
--[[
  DEFINE (or DEFINE ... REPLACE) of a queue's runtime state: store every attribute given, keep
  existing counters and messages. A new queue's generation continues after the last one used by
  a deleted queue of the same name, so a stale handle can never match a re-created queue; so do
  its message ids, so that (queue, id) names one message for ever (the recovery log relies on it).

  Input:
    KEYS[1]  {tag}:q:<NAME>:ctl
    KEYS[2]  {tag}:queues                 set of queue names with state in the structure
    KEYS[3]  {tag}:gens                   hash: queue name -> last generation of a deleted queue
    KEYS[4]  {tag}:seqs                   hash: queue name -> last message id of a deleted queue
    KEYS[5]  {tag}:fence                  incarnations fenced by peer recovery (_fence.lua)

    ARGV[1]  queue key prefix "{tag}:q:<NAME>:"
    ARGV[2]  queue name
    ARGV[3]  availability channel of the queue's structure (waiters retry: GET may have been enabled)
    ARGV[4]  caller: queue manager name
    ARGV[5]  caller: its incarnation (a fenced one gets {2009} and nothing changes)
    ARGV[6]  caller: deadline, ms since the epoch on the CF's clock (TIME): run later,
             the call changes nothing and gets {2345} (_fence.lua)
    ARGV[7..] attribute name, value, name, value, ...; a name starting with "?" is set only
              when the queue has no value for it yet (event switches that the queue manager
              changes itself: re-applying a definition must not undo a switch)

  Output:
    {gen, created}   created 1 when the queue had no state before
]]
--@include _helpers.lua
--@include _fence.lua

-- (see below: the field that keeps ctl a hash table; its value is longer than 64 bytes)
local CTL_ENCODING_FIELD = "enc"
local CTL_ENCODING_VALUE = "hashtable: this value is over 64 bytes so that Redis keeps ctl a hash table"

local refused = refusal(KEYS[5], ARGV[4], ARGV[5], ARGV[6])
if refused then return { refused } end

local ctl = KEYS[1]
local gen = redis.call("HGET", ctl, "gen")
local created = 0
if not gen then
  gen = (tonumber(redis.call("HGET", KEYS[3], ARGV[2])) or 0) + 1
  local seq = tonumber(redis.call("HGET", KEYS[4], ARGV[2])) or 0
  redis.call("HSET", ctl, "gen", gen, "depth", 0, "seq", seq, "uncom", 0, "ipprocs", 0,
             "opprocs", 0, "excl", 0, "handles", 0)
  redis.call("HDEL", KEYS[3], ARGV[2])
  redis.call("HDEL", KEYS[4], ARGV[2])
  created = 1
end
-- Every MQPUT and MQGET reads some twenty fields of ctl and writes five: in Redis's compact
-- encoding of a small hash (a listpack: up to 512 fields of short values) each is a scan of the
-- whole hash. One value longer than hash-max-listpack-value (64) makes it a hash table for good
-- (a third less work for put.lua's read of the attributes). Written by every define, so a queue
-- defined by an earlier version gets it at its next DEFINE REPLACE, ALTER or queue manager start.
redis.call("HSET", ctl, CTL_ENCODING_FIELD, CTL_ENCODING_VALUE)
for i = 7, #ARGV, 2 do
  local name = ARGV[i]
  if string.sub(name, 1, 1) == "?" then
    redis.call("HSETNX", ctl, string.sub(name, 2), ARGV[i + 1])
  else
    redis.call("HSET", ctl, name, ARGV[i + 1])
  end
end
redis.call("SADD", KEYS[2], ARGV[2])
notify(ARGV[1], ARGV[3], ARGV[2])
return { tonumber(gen), created }
