--[[
  Shared fragment, not a script (include after _helpers.lua): resolution of one connection's
  unit of work within one structure, used by commit.lua and backout.lua.

  The unit-of-work list holds "P:<id>:<queue>" (put under syncpoint) and "G:<id>:<queue>"
  (destructive get under syncpoint), in the order the operations happened; it is processed in
  that order, so committed puts become visible in put order.

    commit:  P -> indexed (visible), waiters woken,       G -> data deleted, its COD report
             its COA report queued                             queued
    backout: P -> data deleted, depth - 1                 G -> back at its original score with
                                                               backout count + 1, depth + 1,
                                                               waiters woken
  "M:<id>:<queue>" is a get marked MQGMO_MARK_SKIP_BACKOUT (z/OS): a commit treats it as "G"; an
  application's MQBACK (keep_marked) leaves it got, as the one operation of a new unit of work
  (the entry stays, as "G", with its "uncom"); any other backout (disconnect, recovery) treats it
  as "G". Every other entry takes one off the queue's "uncom". The list and the registry entry are removed,
  so a second call is a no-op.

  Returns a JSON array, one object per queue touched (first-touched order):
    {"queue": name, "puts": n, "gets": n, "depth": depth after, "available": idx size after,
     "reports": COA and COD reports queued}
]]

local function resolve_uow(sp, list_key, registry_key, member, channel, commit, trig_channel, keep_marked)
  local shared = string.find(sp, ".CF.", 1, true) ~= nil
  local ops = redis.call("LRANGE", list_key, 0, -1)
  local order, per = {}, {}
  local kept = nil
  for i = 1, #ops do
    local kind, id, q = string.match(ops[i], "^(%a):(%d+):(.*)$")
    if kind == "M" and keep_marked then
      kept = "G:" .. id .. ":" .. q
    else
      local t = per[q]
      if not t then
        t = { queue = q, puts = 0, gets = 0, n = 0, scores = {}, reports = 0 }
        per[q] = t
        order[#order + 1] = t
      end
      t.n = t.n + 1
      local qp = sp .. "q:" .. q .. ":"
      local raw = redis.call("HGET", qp .. "meta", id)
      if raw then
        local m = parse_meta(raw)
        if kind == "P" then
          redis.call("ZREM", qp .. "pend", id)
          if commit then
            index_add(qp, id, m)
            t.reports = t.reports + arrival_report(sp, qp, id, m)  -- COA at commit
          else
            delete_data(qp, id, m)
          end
          t.puts = t.puts + 1
          t.scores[#t.scores + 1] = tonumber(m.score)
        else
          if commit then
            t.reports = t.reports + delivery_report(sp, qp, id, m)  -- COD at commit, never at backout
            delete_data(qp, id, m)
          else
            m.bo = m.bo + 1
            redis.call("HSET", qp .. "meta", id, make_meta(m))
            index_add(qp, id, m)
          end
          t.gets = t.gets + 1
        end
      end
    end
  end

  local out = {}
  for i = 1, #order do
    local t = order[i]
    local qp = sp .. "q:" .. t.queue .. ":"
    local ctl = qp .. "ctl"
    local depth = 0
    -- HINCRBY would resurrect a deleted queue's ctl; delete refuses while uncom > 0, but be safe.
    if redis.call("HEXISTS", ctl, "gen") == 1 then
      redis.call("HINCRBY", ctl, "uncom", -t.n)
      if commit then
        depth = tonumber(redis.call("HGET", ctl, "depth")) or 0
      else
        depth = redis.call("HINCRBY", ctl, "depth", t.gets - t.puts)
      end
    end
    -- Messages became available: committed puts, or backed-out gets.
    if (commit and t.puts > 0) or (not commit and t.gets > 0) then
      notify(qp, channel, t.queue)
    end
    -- A shared queue's committed puts start to count for triggering now: publish the counts.
    if commit and shared and t.puts > 0 and trig_channel then
      local f = redis.call("HMGET", ctl, "trigger", "trigtype", "trigmpri")
      if f[1] == "1" and f[2] ~= "NONE" then
        local tp = tonumber(f[3]) or 0
        local limit = (10 - tp) * PRIO_UNIT
        local counted = 0
        for j = 1, #t.scores do
          if t.scores[j] < limit then counted = counted + 1 end
        end
        local after = trigger_count(qp, tp, false)
        redis.call("SPUBLISH", trig_channel, t.queue .. "|" .. (after - counted) .. "|" .. after .. "|" .. t.puts)
      end
    end
    out[i] = { queue = t.queue, puts = t.puts, gets = t.gets, depth = depth,
               available = redis.call("ZCARD", qp .. "idx"), reports = t.reports }
  end

  redis.call("DEL", list_key)
  if kept then
    redis.call("RPUSH", list_key, kept)  -- the marked get: the new unit of work
  else
    redis.call("SREM", registry_key, member)
  end
  if #out == 0 then return "[]" end
  return cjson.encode(out)
end
