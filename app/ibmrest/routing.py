"""Which queue manager of the group serves an IBM REST call, and how to reach it.

IBM's URLs name the queue manager (``.../qmgr/{qmgrName}/...``). This one serves its own name.
A put (POST) for another member of the QSG travels by intra-group queuing when IGQ is enabled
here; gets, browses, message lists, MQSC - and puts while IGQ is disabled - are forwarded as
they came to that queue manager's own REST endpoint (its URL from the group membership) and its
answer is returned unchanged: reading another QM's queue is that QM's business.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx

from app.ibmrest.errors import qmgr_unavailable, unknown_qmgr
from app.tls import certificate_not_trusted

if TYPE_CHECKING:
    from app.qmgr.qmgr import QueueManager

# Marks a forwarded call, so that a QM that is not the one named (stale membership) refuses it
# instead of forwarding it again.
FORWARDED_BY = "x-qsg-forwarded-by"
# Headers that describe one hop, never forwarded as they came.
_HOP_HEADERS = frozenset({"host", "content-length", "connection", "keep-alive", "transfer-encoding", "te",
                          "upgrade", "proxy-authorization", "proxy-connection", "trailer"})
_RESPONSE_SKIP = _HOP_HEADERS | {"date", "server"}
FORWARD_MARGIN_S = 30.0  # beyond the call's own wait, for the remote QM to answer


@dataclass(frozen=True)
class Forwarded:
    """The answer of the queue manager a call was forwarded to."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes


class Forwarder:
    """Sends an IBM REST call on to the queue manager it names (see the module docstring)."""

    def __init__(self, qm: QueueManager) -> None:
        self.qm = qm

    def is_local(self, qmgr: str) -> bool:
        return qmgr == self.qm.name

    async def target_url(self, qmgr: str, *, admin: bool = False) -> str:
        """The REST URL of active member ``qmgr``; IBM's error for an unknown or stopped one."""
        member = next((m for m in await self.qm.membership.members() if m.name == qmgr), None)
        if member is None:
            raise unknown_qmgr(qmgr, self.qm.qsg, admin=admin)
        if member.status != "ACTIVE" or not member.url:
            raise qmgr_unavailable(qmgr, self.qm.qsg, f"{qmgr} is {member.status.lower()} in {self.qm.qsg}",
                                   admin=admin)
        return member.url

    async def forward(self, qmgr: str, *, method: str, path: str, query: str, headers: Mapping[str, str],
                      body: bytes, wait_ms: int = 0, admin: bool = False) -> Forwarded:
        """Send the call to ``qmgr`` and return its answer as it is."""
        if FORWARDED_BY in {k.lower() for k in headers}:
            # A forwarded call reached a QM that is not the one it names: never a second hop.
            raise qmgr_unavailable(qmgr, self.qm.qsg, f"{self.qm.name} received a call for {qmgr} that was "
                                   "already forwarded once", admin=admin)
        url = await self.target_url(qmgr, admin=admin)
        # Origin: this queue manager has checked the caller's web origin (app.api.auth); to the
        # next one the call is this server's, as any program's call without one.
        sent = {k: v for k, v in headers.items() if k.lower() not in _HOP_HEADERS and k.lower() != "origin"}
        sent[FORWARDED_BY] = self.qm.name
        # One client per call: forwarding is a stop-gap until IGQ, and a per-call client needs no
        # life cycle in the application's lifespan.
        timeout = httpx.Timeout(wait_ms / 1000 + FORWARD_MARGIN_S, connect=5.0)
        try:
            # verify: members serving https are checked against the group's CA (QSG_TLS_CA)
            async with httpx.AsyncClient(timeout=timeout, verify=self.qm.peer_tls) as client:
                r = await client.request(method, f"{url}{path}" + (f"?{query}" if query else ""),
                                         headers=sent, content=body)
        except httpx.HTTPError as exc:
            bad_cert = certificate_not_trusted(exc)
            why = (f"its TLS certificate is not trusted by {self.qm.name} ({bad_cert.verify_message}): "
                   "set QSG_TLS_CA to the group's CA" if bad_cert else f"did not answer: {type(exc).__name__}")
            raise qmgr_unavailable(qmgr, self.qm.qsg, f"{qmgr} at {url} {why}", admin=admin) from None
        kept = [(k, v) for k, v in r.headers.multi_items() if k.lower() not in _RESPONSE_SKIP]
        return Forwarded(r.status_code, kept, r.content)
