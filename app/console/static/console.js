// The live console: draws /console/state as /console/events sends it, browses and puts through
// the public REST API (/v1, the caller's rights), runs MQSC through /console/mqsc.
// With authentication on it logs in with IBM's login resource (an HttpOnly, SameSite=Strict
// cookie), never with browser-kept basic credentials, and sends the CSRF header on every call.
"use strict";

const $ = (id) => document.getElementById(id);

function cell(row, value, numeric) {
  const td = row.insertCell();
  td.textContent = value === undefined || value === null ? "" : String(value);
  if (numeric) td.className = "num";
  return td;
}

function fill(table, rows, draw) {
  const body = table.tBodies[0];
  body.replaceChildren();
  for (const item of rows) draw(body.insertRow(), item);
}

// A time in ms since the epoch as "YYYY-MM-DD HH:MM:SS" (UTC).
function when(ms) {
  return new Date(ms).toISOString().replace("T", " ").slice(0, 19);
}

// ---- the series: the server's rates points (app/console/rates.py), oldest first ----

const HISTORY_MS = 5 * 60 * 1000;
const points = [];     // {t, ms, queues: {Q: {depth, put, get, by_qm: {QM: [put, get]}}}, qmgrs: {QM: {put, get}}}
const charts = {};     // uPlot instances by figure id, with the series they were made for
let chosenQueue = "";  // the queue the user picked for the queue charts ("" = the busiest)
let igqQueue = "SYSTEM.QSG.TRANSMIT.QUEUE";

function addPoint(point) {
  if (!point || (points.length && point.t <= points[points.length - 1].t)) return;
  points.push(point);
  while (points.length && points[0].t < point.t - HISTORY_MS) points.shift();
}

function latest() {
  return points.length ? points[points.length - 1] : { t: 0, queues: {}, qmgrs: {} };
}

// The queue the queue charts show: the chosen one, else the busiest application queue.
function chartQueue() {
  if (chosenQueue) return chosenQueue;
  let best = "", score = -1;
  for (const p of points.slice(-60)) {
    for (const [name, q] of Object.entries(p.queues)) {
      if (name.startsWith("SYSTEM.")) continue;
      const s = q.put + q.get + q.depth / 1000;
      if (s > score) { best = name; score = s; }
    }
  }
  return best;
}

const COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];

// Draws one chart: series is [[label, value-of-point], ...]; made again when its series change.
function draw(id, series, yLabel) {
  const figure = $(id);
  const labels = series.map((s) => s[0]);
  const data = [points.map((p) => p.t / 1000), ...series.map((s) => points.map((p) => s[1](p)))];
  let chart = charts[id];
  if (chart && chart.labels.join("|") !== labels.join("|")) {
    chart.destroy();
    chart = null;
  }
  const width = Math.max(300, figure.clientWidth - 4);
  if (!chart) {
    if (typeof uPlot === "undefined") return;  // the library did not load: the tables still work
    const options = {
      width, height: 200, legend: { live: false },
      // the time axis in UTC (ticks on UTC minutes, labels HH:MM:SS), as every time on the page
      tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), "Etc/UTC"),
      axes: [{ space: 55, incrs: [15, 30, 60, 120, 300],
               values: (u, ticks) => ticks.map((t) => new Date(t * 1000).toISOString().slice(11, 19)) },
             { label: yLabel, size: 56 }],
      // always the last 5 minutes, the newest point at the right edge (from the data: uPlot's own
      // min and max of a single point are not the point's)
      scales: { x: { time: true, range: (u) => {
                  const xs = u.data[0];
                  const last = xs.length ? xs[xs.length - 1] : Date.now() / 1000;
                  return [last - HISTORY_MS / 1000, last + 2];
                } },
                y: { range: (u, min, max) => [0, Math.max(1, max * 1.1)] } },
      series: [{}, ...labels.map((label, i) => ({
        label, stroke: COLOURS[i % COLOURS.length], width: 1.5,
        dash: label.endsWith(" get") || label === "gets" ? [6, 3] : undefined,
      }))],
    };
    chart = new uPlot(options, data, figure);
    chart.labels = labels;
    chart.root.setAttribute("role", "img");
    chart.root.setAttribute("aria-label", figure.querySelector("figcaption").textContent);
    charts[id] = chart;
  } else {
    if (Math.abs(chart.width - width) > 8) chart.setSize({ width, height: 200 });
    chart.setData(data);
  }
}

let memberNames = [];  // every QM of the group gets its series (and keeps its colours) from the start

function drawCharts() {
  const qmgrs = new Set(memberNames);
  for (const p of points) for (const name of Object.keys(p.qmgrs)) qmgrs.add(name);
  const series = [];
  for (const name of [...qmgrs].sort()) {
    series.push([`${name} put`, (p) => (p.qmgrs[name] || {}).put || 0]);
    series.push([`${name} get`, (p) => (p.qmgrs[name] || {}).get || 0]);
  }
  draw("chart-qmgr", series, "messages/s");
  const queue = chartQueue();
  for (const span of document.querySelectorAll(".chart-q")) span.textContent = queue || "(no queue yet)";
  const of = (p) => p.queues[queue] || {};
  draw("chart-queue-rates", [["puts", (p) => of(p).put || 0], ["gets", (p) => of(p).get || 0]], "messages/s");
  draw("chart-depth", [["CURDEPTH", (p) => (of(p).depth === undefined ? null : of(p).depth)]], "messages");
}

// ---- the group view ----

const lastStatus = {};  // QM -> STATUS/RECOVERED/INCARNATION last drawn, to list the changes as they happen
const changes = [];     // {ts, text, recovered}: members' state changes and peer recoveries, as seen
const seenRecoveries = new Set();

function noteChange(ts, text, recovered) {
  changes.push({ ts, text, recovered });
  changes.sort((a, b) => b.ts - a.ts);
  changes.length = Math.min(changes.length, 50);
  $("recoveries").replaceChildren(...changes.map((c) => {
    const item = document.createElement("li");
    if (c.recovered) item.dataset.recovered = c.recovered;
    item.textContent = `${when(c.ts)} ${c.text}`;
    return item;
  }));
}

function stateBadge(td, value) {
  td.textContent = "";
  const badge = td.appendChild(document.createElement("span"));
  badge.className = "state";
  badge.dataset.state = value;
  badge.textContent = value;
}

function drawGroup(state) {
  const now = latest();
  const seenAt = (state.rates || {}).t || Date.now();  // the group clock's time of this snapshot
  fill($("members"), state.members, (row, m) => {
    row.dataset.qmgr = m.QMNAME;
    const name = cell(row, "");
    const a = name.appendChild(document.createElement("a"));
    a.textContent = m.QMNAME;
    if (m.URL) a.href = `${m.URL}/console`;
    a.setAttribute("aria-label", `${m.QMNAME}'s console`);
    row.title = `started ${m.STARTED ? when(Number(m.STARTED)) : "?"} at ${m.URL}`;
    stateBadge(cell(row, ""), m.STATUS);
    row.cells[1].dataset.field = "status";
    cell(row, m.INCARNATION, true).dataset.field = "incarnation";
    cell(row, m.RECOVERED).dataset.field = "recovered";
    const rates = now.qmgrs[m.QMNAME] || { put: 0, get: 0 };
    cell(row, rates.put.toFixed(1), true);
    cell(row, rates.get.toFixed(1), true);
    const seen = `${m.STATUS}/${m.RECOVERED}/${m.INCARNATION}`;
    if (lastStatus[m.QMNAME] !== undefined && lastStatus[m.QMNAME] !== seen) {
      noteChange(seenAt, `${m.QMNAME} is ${m.STATUS}` +
                 (m.RECOVERED === "YES" && m.STATUS === "FAILED" ? ", recovered" : "") + ` (incarnation ${m.INCARNATION})`);
    }
    lastStatus[m.QMNAME] = seen;
  });
  fill($("structures"), state.structures, (row, s) => {
    row.dataset.structure = s.CFSTATUS || "";
    cell(row, s.CFSTATUS);
    stateBadge(cell(row, ""), s.STATUS || "");
    cell(row, s.CFNODE);
    cell(row, s.ENTSUSED, true);
    cell(row, s.FAILDATE ? `${s.FAILDATE} ${s.FAILTIME}` : "");
  });
  // IGQ: each QM's puts to the transmission queue are what it sends, its agent's gets what it receives
  const qms = state.members.map((m) => m.QMNAME);
  const totals = {};
  for (const point of points) {
    const seconds = point.ms / 1000;  // the time the point's rates cover
    for (const [qm, [put, get]] of Object.entries((point.queues[igqQueue] || {}).by_qm || {})) {
      const t = totals[qm] || (totals[qm] = { sent: 0, received: 0 });
      t.sent += put * seconds;
      t.received += get * seconds;
    }
  }
  const xmit = (now.queues[igqQueue] || {}).by_qm || {};
  fill($("igq"), qms, (row, qm) => {
    row.dataset.qmgr = qm;
    const [put, get] = xmit[qm] || [0, 0];
    const t = totals[qm] || { sent: 0, received: 0 };
    cell(row, qm);
    cell(row, put.toFixed(1), true);
    cell(row, get.toFixed(1), true);
    cell(row, Math.round(t.sent), true);
    cell(row, Math.round(t.received), true);
  });
  // The flows: this QM's IGQ deliveries say exactly where each came from (the putting QM); the
  // counters add what the others moved (a sender and a receiver in the same 5 minutes)
  const exact = new Map();
  const happenings = allHappenings();
  for (const h of happenings) {
    if (h.verb !== "IGQ" || h.ts < now.t - HISTORY_MS || !h.from) continue;
    const key = `${h.from} \u2192 ${h.to || state.qmgr.name}`;
    const flow = exact.get(key) || exact.set(key, { count: 0, queues: new Set() }).get(key);
    flow.count += 1;
    flow.queues.add(h.object);
  }
  const flows = [...exact].map(([key, f]) => [key, `${key}: ${f.count} to ${[...f.queues].sort().join(", ")}`]);
  const senders = qms.filter((qm) => (totals[qm] || {}).sent >= 1);
  const receivers = qms.filter((qm) => (totals[qm] || {}).received >= 1);
  for (const from of senders) {
    for (const to of receivers) {
      const key = `${from} \u2192 ${to}`;
      if (from !== to && !exact.has(key)) flows.push([key, `${key} (by the transmission queue's counters)`]);
    }
  }
  $("igq-flows").replaceChildren(...(flows.length ? flows : [["", "no IGQ traffic in the last 5 minutes"]])
    .map(([key, text]) => {
      const li = document.createElement("li");
      if (key) li.dataset.flow = key;
      li.textContent = text;
      return li;
    }));
  const event = happenings.find((h) => h.verb === "EVENT" && /DEPTH/.test(h.reason || ""));
  if (event) {
    $("coordinator").textContent = `${event.reason} on ${event.object} at ${when(event.ts)}, ` +
      `coordinated by ${event.coordinator || event.qmgr}`;
    $("coordinator").dataset.qmgr = event.coordinator || event.qmgr;
  }
  for (const h of happenings.filter((h) => h.verb === "PEER_RECOVERY").reverse()) {
    const key = `${h.ts}/${h.object}`;
    if (seenRecoveries.has(key)) continue;
    seenRecoveries.add(key);
    noteChange(h.ts, `${h.object} recovered by ${h.qmgr}: ${h.backed_out || 0} backed out, ` +
               `${h.committed || 0} committed, ${h.handles_cleared || 0} handles cleared`, h.object);
  }
}

// ---- the timeline ----

let lastHappenings = [];     // this QM's, from the event stream
let groupHappenings = null;  // every QM's (GET /console/happenings?scope=group), asked every 3 seconds
let groupProblem = "";       // why the group's could not all be had
let lastState = null;
const memberUrls = {};       // QM -> its URL, for links to another QM's messages

// The group's happenings: every QM's as last asked, with this QM's newer ones from the stream.
function allHappenings() {
  if (!groupHappenings) return lastHappenings;
  const seen = new Set();
  const key = (h) => `${h.qmgr}|${h.ts}|${h.verb}|${h.object}|${h.msg_id || h.correl_id || ""}`;
  return [...lastHappenings, ...groupHappenings]
    .filter((h) => !seen.has(key(h)) && seen.add(key(h)))
    .sort((a, b) => b.ts - a.ts);
}

// The timeline's rows: this QM's happenings, or the whole group's.
function timelineRows() {
  return $("timeline-scope").value === "group" ? allHappenings() : lastHappenings;
}

async function loadGroupHappenings() {
  try {
    const answer = await call("GET", "/console/happenings?scope=group");
    groupHappenings = answer.happenings;
    groupProblem = answer.unanswered.length ? `not answering: ${answer.unanswered.join(", ")}` : "";
  } catch (e) {
    groupProblem = e.message;
  }
  if (lastState) drawGroup(lastState);
  drawTimeline();
}

$("timeline-scope").addEventListener("change", drawTimeline);
// The message a happening put, as a link that browses it (the page's #browse=... address).
function messageLink(h) {
  if (h.verb === "EVENT" && h.correl_id) return ["SYSTEM.ADMIN.PERFM.EVENT", "correl_id", h.correl_id];
  if (h.verb === "IGQ" && h.msg_id) return [h.object, "msg_id", h.msg_id];
  if (h.verb === "TRIGGER" && h.detail) return [h.detail, "", ""];
  // a report put here (to another QM's queue it went through the group: nothing to browse here)
  if (h.verb === "REPORT" && h.msg_id && h.to === h.qmgr) return [h.object, "msg_id", h.msg_id];
  return null;
}

function drawTimeline() {
  const note = $("timeline-scope").value === "group" ? groupProblem : "";
  $("timeline-note").hidden = !note;
  $("timeline-note").textContent = note;
  const filter = $("timeline-filter").value.trim().toUpperCase();
  const kind = $("timeline-kind").value;
  const rows = timelineRows().filter((h) => (!kind || h.verb === kind) &&
                                            (!filter || String(h.object || "").toUpperCase().includes(filter)));
  if (!rows.length) {
    fill($("timeline"), [timelineRows().length ? "nothing matches" : "nothing has happened yet"], (row, text) => {
      cell(row, text).colSpan = 7;
    });
    return;
  }
  fill($("timeline"), rows, (row, h) => {
    row.dataset.verb = h.verb;
    row.dataset.object = h.object || "";
    row.dataset.qmgr = h.qmgr || "";
    cell(row, when(h.ts));
    cell(row, h.qmgr);
    cell(row, h.verb);
    cell(row, h.object);
    cell(row, h.reason || (h.count !== undefined ? h.count : h.rc || ""));
    const td = cell(row, "");
    const link = messageLink(h);
    if (link) {
      const [queue, field, value] = link;
      const a = td.appendChild(document.createElement("a"));
      // another QM's message is on that QM: the link opens its console there
      const there = h.qmgr && h.qmgr !== $("title").dataset.qmgr && memberUrls[h.qmgr] ? `${memberUrls[h.qmgr]}/console` : "";
      a.href = `${there}#browse=${encodeURIComponent(queue)}` + (field ? `&${field}=${value}` : "");
      a.className = "id";
      a.textContent = field ? `${field === "correl_id" ? "CorrelId" : "MsgId"} ${value}` : `browse ${queue}`;
      a.setAttribute("aria-label", field ? `Browse the message on ${queue} with ${field} ${value}` : `Browse ${queue}`);
      td.dataset.field = field || "queue";
    }
    const extra = h.verb === "EVENT" && h.coordinator ? `coordinated by ${h.coordinator}` :
      h.verb === "PEER_RECOVERY" ? `${h.backed_out || 0} backed out, ${h.committed || 0} committed` :
      h.verb === "TRIGGER" ? `initiation queue ${h.detail || ""}` :
      h.verb === "IGQ" && h.from ? `from ${h.from} to ${h.to}` :
      h.verb === "REPORT" ? `${h.feedback} report to ${h.object} at ${h.to}` : (h.detail || "");
    cell(row, extra).className = "wrap";
  });
}

$("timeline-filter").addEventListener("input", drawTimeline);
$("timeline-kind").addEventListener("change", drawTimeline);

// ---- the nightly reports: a queue's row links to its line in the newest report that has it ----

let reportQueues = null;  // {date, names: Set}

async function loadReports() {
  try {
    const days = (await (await fetch("/reports", { headers: { Accept: "application/json" } })).json()).reports || [];
    const day = days.find((d) => d.summary);
    if (!day) return;
    const summary = await (await fetch(day.summary)).json();
    reportQueues = { date: day.date, names: new Set((summary.queues || []).map((q) => q.queue)) };
    $("reports-link").href = `/reports/${day.date}`;
    $("reports-link").textContent = `Report of ${day.date}`;
  } catch (e) {
    reportQueues = null;  // no reports here (none run yet, or not allowed): the queues go without links
  }
}

// ---- the whole page ----

function render(state) {
  lastHappenings = state.happenings;
  lastState = state;
  memberNames = state.members.map((m) => m.QMNAME);
  for (const m of state.members) memberUrls[m.QMNAME] = m.URL;
  $("title").textContent = `${state.qmgr.name} of ${state.qmgr.qsg}`;
  $("title").dataset.qmgr = state.qmgr.name;
  const q = state.qmgr;
  $("status").textContent = `${q.status} - IGQ agent ${q.IGQAGENT || "?"}` +
    (q.IGQAGENT === "RETRY" ? ` (${q.IGQRETRIES} retries: ${q.IGQRETRYREASON})` : "");
  // The QM's connection to the coupling facility: CONNECTED, LOST (tolerating or not) or REJOINING.
  const cf = q.cf;
  $("cfconn").textContent = `CF ${cf.state}` + (cf.state === "LOST" ? ` since ${when(cf.since)} (CFCONLOS ${cf.cfconlos})` : "");
  $("cfconn").dataset.state = cf.state;
  document.title = `${state.qmgr.name} - QSG console`;
  if (state.igq_queue) igqQueue = state.igq_queue;
  for (const point of state.history || []) addPoint(point);
  addPoint(state.rates);
  const now = latest();
  drawGroup(state);
  fill($("queues"), state.queues, (row, q) => {
    row.dataset.queue = q.QUEUE;
    row.dataset.qsgdisp = q.QSGDISP;
    const rates = now.queues[q.QUEUE] || { put: 0, get: 0 };
    cell(row, q.QUEUE);
    cell(row, q.QSGDISP);
    cell(row, q.CURDEPTH, true).dataset.field = "curdepth";
    cell(row, q.MAXDEPTH, true);
    cell(row, rates.put.toFixed(1), true).dataset.field = "puts";
    cell(row, rates.get.toFixed(1), true).dataset.field = "gets";
    cell(row, q.IPPROCS, true).dataset.field = "ipprocs";
    cell(row, q.OPPROCS, true).dataset.field = "opprocs";
    cell(row, q.CFSTRUCT);
    const report = cell(row, "");
    if (reportQueues && reportQueues.names.has(q.QUEUE)) {
      const a = report.appendChild(document.createElement("a"));
      a.href = `/reports/${reportQueues.date}#queue-${encodeURIComponent(q.QUEUE)}`;
      a.textContent = reportQueues.date;
      a.setAttribute("aria-label", `${q.QUEUE} in the nightly report of ${reportQueues.date}`);
      a.addEventListener("click", (event) => event.stopPropagation());
    }
    cell(row, q.DESCR).className = "wrap";
    row.addEventListener("click", () => browse(q.QUEUE));
  });
  const select = $("chart-queue");
  const names = state.queues.map((q) => q.QUEUE);
  if (select.options.length - 1 !== names.length || names.some((n, i) => select.options[i + 1].value !== n)) {
    select.replaceChildren(new Option("(busiest)", ""), ...names.map((n) => new Option(n, n)));
    select.value = chosenQueue;
  }
  drawTimeline();
  drawCharts();
}

$("chart-queue").addEventListener("change", () => {
  chosenQueue = $("chart-queue").value;
  drawCharts();
});

window.addEventListener("resize", () => drawCharts());

// For the tests and the curious: the series and the charts as drawn.
window.qsgConsole = { points, charts };

const CSRF = { "ibm-mq-rest-csrf-token": "console" };

async function call(method, path, body) {
  const options = { method, headers: { "Content-Type": "application/json", ...CSRF } };
  if (body !== undefined) options.body = JSON.stringify(body);
  const response = await fetch(path, options);
  const answer = response.status === 204 ? {} : await response.json();
  if (!response.ok) {
    const error = answer.error || {};
    throw new Error(`${error.reason_name || response.status}: ${error.message || response.statusText}`);
  }
  return answer;
}

// One short connection per action, as a well-behaved MQ application would: MQCONN ... MQDISC.
async function withConnection(work) {
  const { hconn } = await call("POST", "/v1/connections", { appl_name: "QSG CONSOLE" });
  try {
    return await work(hconn);
  } finally {
    await call("DELETE", `/v1/connections/${hconn}`).catch(() => {});
  }
}

function shown(message) {
  return message.data_encoding === "utf-8" ? message.data : `(base64) ${message.data}`;
}

// Browses up to 50 messages of a queue; with ``match`` ({correl_id} or {msg_id}) only those.
async function browse(queue, match) {
  $("browse").hidden = false;
  $("browse-q").textContent = queue;
  $("browse-match").textContent = match ? `with ${Object.entries(match).map(([k, v]) => `${k} ${v}`).join(", ")}` : "";
  const table = $("messages");
  try {
    const messages = await withConnection(async (hconn) => {
      const { hobj } = await call("POST", `/v1/connections/${hconn}/objects`,
                                  { object_name: queue, options: ["BROWSE"] });
      try {
        const request = { options: ["BROWSE_FIRST"], max_messages: 50, buffer_length: 2000 };
        if (match) request.match = match;
        const got = await call("POST", `/v1/connections/${hconn}/objects/${hobj}/get-batch`, request);
        return got.messages;
      } catch (e) {
        if (String(e.message).startsWith("MQRC_NO_MSG_AVAILABLE")) return [];
        throw e;
      }
    });
    if (!messages.length) {
      fill(table, [match ? "no such message on the queue (got or expired since)" : "no messages on the queue"], (row, text) => { cell(row, text); });
      return;
    }
    fill(table, messages, (row, m) => {
      row.dataset.msgId = m.md.msg_id;
      row.dataset.correlId = m.md.correl_id;
      cell(row, table.tBodies[0].rows.length);
      for (const key of ["msg_id", "correl_id", "format", "persistence", "priority", "put_appl_name", "put_date_time"]) {
        cell(row, m.md[key]);
      }
      cell(row, shown(m)).dataset.field = "data";
    });
  } catch (e) {
    fill(table, [e.message], (row, text) => { cell(row, text).className = "error"; });
  }
  $("browse").scrollIntoView({ block: "nearest" });
}

// A link to a message: #browse=QUEUE[&correl_id=...|&msg_id=...] (the timeline's links).
function browseFromAddress() {
  const params = new URLSearchParams(location.hash.slice(1));
  const queue = params.get("browse");
  if (!queue) return;
  const match = {};
  for (const key of ["correl_id", "msg_id"]) if (params.get(key)) match[key] = params.get(key);
  browse(queue, Object.keys(match).length ? match : undefined);
}

window.addEventListener("hashchange", browseFromAddress);

$("put-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const out = $("put-result");
  try {
    const answer = await withConnection((hconn) => call("POST", `/v1/connections/${hconn}/put1`, {
      object_name: $("put-q").value.trim(), options: ["NO_SYNCPOINT"], data: $("put-data").value }));
    out.className = "ok";
    out.textContent = `put, MsgId ${answer.md.msg_id}`;
  } catch (e) {
    out.className = "error";
    out.textContent = e.message;
  }
});

$("mqsc-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  try {
    const answer = await call("POST", "/console/mqsc", { script: $("mqsc-script").value });
    $("mqsc-output").textContent = answer.text;
  } catch (e) {
    $("mqsc-output").textContent = e.message;
  }
});

function listen() {
  const source = new EventSource("/console/events");
  source.onopen = () => { $("live").textContent = "live"; };
  source.onmessage = (event) => {
    $("problem").hidden = true;
    render(JSON.parse(event.data));
  };
  source.addEventListener("problem", (event) => {
    const error = JSON.parse(event.data).error || {};
    $("problem").hidden = false;
    $("problem").textContent = `${error.reason_name}: ${error.message}`;
  });
  source.onerror = () => { $("live").textContent = "reconnecting..."; };
}

$("login-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const response = await fetch("/ibmmq/rest/v1/login", {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ username: $("login-user").value, password: $("login-password").value }) });
  $("login-password").value = "";
  if (response.status !== 204) {
    $("login-result").textContent = "wrong user name or password";
    return;
  }
  $("login-result").textContent = "";
  $("login").hidden = true;
  start();
});

$("logout").addEventListener("click", async () => {
  await fetch("/ibmmq/rest/v1/login", { method: "DELETE", headers: CSRF });
  location.reload();
});

// The first snapshot over plain HTTP (so a refusal shows its reason), then the live stream.
async function start() {
  const response = await fetch("/console/state");
  const answer = await response.json();
  if (response.status === 401) {  // authentication on and no login yet
    $("login").hidden = false;
    $("live").textContent = "not logged in";
    return;
  }
  if (!response.ok) {
    $("problem").hidden = false;
    $("problem").textContent = `${answer.error.reason_name}: ${answer.error.message}`;
    $("live").textContent = "not live";
    return;
  }
  $("logout").hidden = false;
  await loadReports();
  render(answer);
  listen();
  loadGroupHappenings();  // the group view and the group's timeline show every QM's happenings
  setInterval(loadGroupHappenings, 3000);
  browseFromAddress();
}

start();
