"""``qsg trigmon``: a trigger monitor (like z/OS CKTI/CSQQTRMN or runmqtrm) over the REST API.

It holds the initiation queue open for input (which is what lets the queue manager trigger),
takes each trigger message under syncpoint and starts the application the MQTM names:
an ApplId that is an http(s) URL gets the MQTM POSTed as JSON (with retries and a timeout);
any other ApplId is run as a program with the MQTM (JSON) as its argument, as runmqtrm passes
the MQTMC2. A trigger message whose application cannot be started goes to the queue manager's
dead-letter queue with an MQDEAD header (reason MQFB_APPL_CANNOT_BE_STARTED), never dropped;
only then is the unit of work committed, so a monitor that dies loses nothing.

Against a queue manager with authentication on, the monitor authenticates every call with a
user and password or an API key (``Credentials``); its user needs CONNECT, GET on the
initiation queue and PUT on the dead-letter queue. The credentials go to the queue manager
only, never to the applications it starts.
"""

from __future__ import annotations

import json
import logging
import shlex
import subprocess
import time
from typing import Any

import httpx
from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_exponential

from app.client.core import Credentials, ssl_context

log = logging.getLogger("qsg.trigmon")
MQFB_APPL_CANNOT_BE_STARTED = 265


class StartFailed(Exception):
    """The application of a trigger message could not be started."""


class TriggerMonitor:
    """One trigger monitor on one initiation queue."""

    def __init__(self, url: str, initq: str, *, deadq: str | None = None, timeout_s: float = 10.0,
                 attempts: int = 3, wait_ms: int = 5000, credentials: Credentials | None = None,
                 ca_file: str | None = None) -> None:
        # ca_file (else QSG_CA_FILE) verifies a queue manager served over https
        self.http = httpx.Client(base_url=url.rstrip("/"), timeout=timeout_s + 60, verify=ssl_context(ca_file),
                                 headers=credentials.headers() if credentials is not None else None)
        self.initq = initq
        self.deadq = deadq
        self.timeout_s = timeout_s
        self.attempts = attempts
        self.wait_ms = wait_ms
        self.hconn = self._call("POST", "/v1/connections", {"appl_name": "QSG TRIGMON"})["hconn"]
        self.hobj = self._call("POST", f"/v1/connections/{self.hconn}/objects",
                               {"object_name": initq, "options": ["INPUT_SHARED", "FAIL_IF_QUIESCING"]})["hobj"]
        if self.deadq is None:
            self.deadq = str(self._call("GET", "/v1/qmgr").get("DEADQ", "")).strip()

    def _call(self, method: str, path: str, body: Any = None) -> dict[str, Any]:
        r = self.http.request(method, path, json=body)
        data = r.json()
        if r.status_code >= 300 or "error" in data:
            raise RuntimeError(f"{method} {path}: {data.get('error', data)}")
        return data

    def process_one(self) -> dict[str, Any] | None:
        """Wait for one trigger message and act on it; None when none came within the wait."""
        r = self.http.post(f"/v1/connections/{self.hconn}/objects/{self.hobj}/get",
                           json={"options": ["WAIT", "SYNCPOINT", "FAIL_IF_QUIESCING"], "wait_ms": self.wait_ms})
        body = r.json()
        if r.status_code == 404 and body.get("error", {}).get("reason") == 2033:
            return None
        if r.status_code >= 300:
            raise RuntimeError(f"MQGET of {self.initq}: {body.get('error')}")
        tm = json.loads(body["data"])
        try:
            self.start(tm)
            log.info("started %s for queue %s", tm.get("ApplId"), tm.get("QName"))
        except StartFailed as exc:
            log.error("cannot start %s for queue %s: %s", tm.get("ApplId"), tm.get("QName"), exc)
            self.dead_letter(body, str(exc))
        self._call("POST", f"/v1/connections/{self.hconn}/commit")
        return tm

    def start(self, tm: dict[str, Any]) -> None:
        appl = str(tm.get("ApplId", "")).strip()
        if not appl:
            raise StartFailed("the trigger message names no application (ApplId is blank)")
        if appl.startswith(("http://", "https://")):
            self._post(appl, tm)
            return
        try:
            # runmqtrm passes the MQTMC2 as the program's argument; here the MQTM as JSON
            subprocess.Popen([*shlex.split(appl), json.dumps(tm)], stdin=subprocess.DEVNULL)
        except OSError as exc:
            raise StartFailed(f"cannot run {appl}: {exc}") from exc

    def _post(self, url: str, tm: dict[str, Any]) -> None:
        @retry(stop=stop_after_attempt(self.attempts), wait=wait_exponential(multiplier=0.2, max=5),
               retry=retry_if_exception_type(httpx.HTTPError), reraise=True)
        def post() -> None:
            httpx.post(url, json=tm, timeout=self.timeout_s).raise_for_status()

        try:
            post()
        except httpx.HTTPError as exc:
            raise StartFailed(f"POST {url} failed after {self.attempts} attempt(s): {exc}") from exc

    def dead_letter(self, message: dict[str, Any], why: str) -> None:
        if not self.deadq:
            raise RuntimeError(f"no dead-letter queue for an unstartable trigger message: {why}")
        header = {"StrucId": "DLH ", "Version": 1, "Reason": MQFB_APPL_CANNOT_BE_STARTED, "Explanation": why,
                  "DestQName": self.initq, "Format": message["md"].get("format", ""),
                  "PutApplName": "QSG TRIGMON", "MsgDesc": message["md"], "MsgData": message["data"]}
        self._call("POST", f"/v1/connections/{self.hconn}/put1", {
            "object_name": self.deadq, "md": {"format": "MQDEAD", "persistence": "PERSISTENT"},
            "options": ["SYNCPOINT"], "data": json.dumps(header)})

    def run(self, stop_after_s: float | None = None) -> None:
        """Serve until interrupted (or for ``stop_after_s``)."""
        deadline = None if stop_after_s is None else time.monotonic() + stop_after_s
        while deadline is None or time.monotonic() < deadline:
            self.process_one()

    def close(self) -> None:
        try:
            self._call("DELETE", f"/v1/connections/{self.hconn}")
        except (RuntimeError, httpx.HTTPError):
            pass
