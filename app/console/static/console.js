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

function render(state) {
  $("title").textContent = `${state.qmgr.name} of ${state.qmgr.qsg}`;
  const q = state.qmgr;
  $("status").textContent = `${q.status} - IGQ agent ${q.IGQAGENT || "?"}` +
    (q.IGQAGENT === "RETRY" ? ` (${q.IGQRETRIES} retries: ${q.IGQRETRYREASON})` : "");
  // The QM's connection to the coupling facility: CONNECTED, LOST (tolerating or not) or REJOINING.
  const cf = q.cf;
  $("cfconn").textContent = `CF ${cf.state}` + (cf.state === "LOST" ? ` since ${when(cf.since)} (CFCONLOS ${cf.cfconlos})` : "");
  $("cfconn").dataset.state = cf.state;
  document.title = `${state.qmgr.name} - QSG console`;
  fill($("members"), state.members, (row, m) => {
    row.dataset.qmgr = m.QMNAME;
    for (const key of ["QMNAME", "STATUS", "URL"]) cell(row, m[key]);
    cell(row, m.STARTED ? when(Number(m.STARTED)) : "");
  });
  const structures = $("structures");
  const columns = state.structures.length ? Object.keys(state.structures[0]) : ["STRNAME", "STATUS"];
  structures.tHead.replaceChildren();
  const head = structures.tHead.insertRow();
  for (const key of columns) head.appendChild(document.createElement("th")).textContent = key;
  fill(structures, state.structures, (row, s) => {
    row.dataset.structure = s.CFSTATUS || s.STRNAME || "";
    for (const key of columns) cell(row, s[key]);
  });
  fill($("queues"), state.queues, (row, q) => {
    row.dataset.queue = q.QUEUE;
    row.dataset.qsgdisp = q.QSGDISP;
    cell(row, q.QUEUE);
    cell(row, q.QSGDISP);
    cell(row, q.CURDEPTH, true).dataset.field = "curdepth";
    cell(row, q.MAXDEPTH, true);
    cell(row, q.IPPROCS, true).dataset.field = "ipprocs";
    cell(row, q.OPPROCS, true).dataset.field = "opprocs";
    cell(row, q.CFSTRUCT);
    cell(row, q.DESCR);
    row.addEventListener("click", () => browse(q.QUEUE));
  });
  fill($("happenings"), state.happenings, (row, h) => {
    cell(row, when(h.ts));
    cell(row, h.verb);
    cell(row, h.object);
    cell(row, h.count !== undefined ? h.count : h.rc);
  });
}

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

async function browse(queue) {
  $("browse").hidden = false;
  $("browse-q").textContent = queue;
  const table = $("messages");
  try {
    const messages = await withConnection(async (hconn) => {
      const { hobj } = await call("POST", `/v1/connections/${hconn}/objects`,
                                  { object_name: queue, options: ["BROWSE"] });
      try {
        const got = await call("POST", `/v1/connections/${hconn}/objects/${hobj}/get-batch`,
                               { options: ["BROWSE_FIRST"], max_messages: 50, buffer_length: 2000 });
        return got.messages;
      } catch (e) {
        if (String(e.message).startsWith("MQRC_NO_MSG_AVAILABLE")) return [];
        throw e;
      }
    });
    if (!messages.length) {
      fill(table, ["no messages on the queue"], (row, text) => { cell(row, text); });
      return;
    }
    fill(table, messages, (row, m) => {
      row.dataset.msgId = m.md.msg_id;
      cell(row, table.tBodies[0].rows.length);
      for (const key of ["msg_id", "correl_id", "format", "persistence", "priority", "put_appl_name", "put_date_time"]) {
        cell(row, m.md[key]);
      }
      cell(row, shown(m)).dataset.field = "data";
    });
  } catch (e) {
    fill(table, [e.message], (row, text) => { cell(row, text).className = "error"; });
  }
}

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
  render(answer);
  listen();
}

start();
