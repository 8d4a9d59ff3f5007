"""IBM's REST error body and the one place MQ reason codes become IBM REST responses.

IBM's REST API answers a failed call with an HTTP status and
``{"error": [{"type", "messageId", "message", "explanation", "action", "completionCode",
"reasonCode", "qmgrName"}]}`` ("REST API error handling",
https://www.ibm.com/docs/en/ibm-mq/9.0.x?topic=api-rest-error-handling). Message texts below are
IBM's MQWB messages (https://www.ibm.com/docs/en/ibm-mq/9.3.x?topic=messages-mqwb03xx-rest-api and
the MQWB00xx/MQWB01xx pages); ``{0}``, ``{1}`` are IBM's ``<insert_0>``, ``<insert_1>``.

Statuses follow IBM's messaging pages: 400 invalid data (a message longer than MAXMSGL
included), 401 not authenticated, 403 not authorized (and the missing CSRF header), 404 queue
(or queue manager) not found, 413 a body over the server's limit (refused unread), 500 "server
issue or error code from IBM MQ", 503 queue manager not running.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from app.cf.errors import CFClientError
from app.core.errors import MQError, bounded, echo
from app.core.reasons import MQRC, CompCode, reason_name
from app.repository.db import RepositoryError

CSRF_HEADER = "ibm-mq-rest-csrf-token"

# messageId -> (message template, explanation, action): IBM's own wording.
CATALOGUE: dict[str, tuple[str, str, str]] = {
    "MQWB0000E": ("An unexpected exception {0} occurred.",
                  "An exception was thrown which is not otherwise handled.",
                  "Use the message from the exception to resolve the problem if possible. If necessary, "
                  "seek assistance from IBM support."),
    "MQWB0004E": ("An internal error occurred while communicating with the queue manager. The root MQ reason "
                  "code was {0} : {1}.",
                  "The REST API caught an exception when communicating with the queue manager. This might "
                  "indicate that there was a problem with the queue manager, or that a parameter that was "
                  "passed was incorrect.",
                  "Rectify the problem, which might require operations to be performed on the queue manager, "
                  "and resubmit the request."),
    "MQWB0009E": ("Could not query the queue manager '{0}'",
                  "The MQ REST API was invoked specifying a queue manager name which cannot be located.",
                  "Resubmit the request with a valid queue manager name or no queue manager name, to retrieve "
                  "a list of queue managers."),
    "MQWB0100E": ("The CSRF header {0} was omitted from the request.",
                  "The REST API request cannot be completed because the CSRF header was omitted.",
                  "Resubmit the request with the correct CSRF header."),
    "MQWB0103E": ("Not authorized to {0} {1}.",
                  "The authenticated principal is not authorized to perform the requested REST API operation.",
                  "Obtain the necessary authorization to perform the operation and resubmit the request."),
    "MQWB0104E": ("The REST API request is not authenticated.",
                  "The REST API request cannot be completed because credentials were omitted from the request "
                  "or are not valid: no HTTP basic credentials, API key or LtpaToken2 login token was accepted.",
                  "Log in (POST /ibmmq/rest/v1/login) or send credentials, and resubmit the request."),
    "MQWB0300E": ("Cannot create messaging connection to {0} on {1}.",
                  "The queue manager or destination might not be created or active.",
                  "Resubmit the request, correcting any issues."),
    "MQWB0302E": ("The {0} request header cannot be set as {1} is not a valid request header value.",
                  "The API request cannot be completed because an invalid value was specified for a request "
                  "header.",
                  "Resubmit the request using a valid header value."),
    "MQWB0303E": ("An unforeseen error occurred while sending, publishing, receiving, or browsing the message.",
                  "An underlying error occurred while sending, publishing, receiving, or browsing the message.",
                  "Resubmit the request, correcting any issues."),
    "MQWB0305E": ("The character set {0} is not acceptable for the request.",
                  "The request is encoded using an unacceptable character set.",
                  "Resubmit the request, correcting any issues."),
    "MQWB0306E": ("The media type is unsupported for this type of request.",
                  "The request attempted to use an unsupported media type.",
                  "Resubmit the request, correcting any issues."),
    # Emulator's choice: IBM's catalogue has no message for a bad query parameter or an unparsable
    # JSON body that we could find, so the nearest IBM texts are reused with their wording adapted.
    "MQWB0302E/query": ("The {0} query parameter cannot be set as {1} is not a valid query parameter value.",
                        "The API request cannot be completed because an invalid value was specified for a "
                        "query parameter.",
                        "Resubmit the request using a valid query parameter value."),
    "MQWB0302E/parameter": ("The {0} query parameter is not valid for this resource.",
                            "The API request cannot be completed because it names a query parameter that the "
                            "resource does not take.",
                            "Resubmit the request without the query parameter."),
    # Emulator's choice: an unknown resource or a method a resource does not take is answered by
    # the web server before the REST API sees it; here it still comes in IBM's error body.
    "MQWB0000E/resource": ("The resource {0} does not exist.",
                           "The URL names no resource of the IBM MQ REST API served here.",
                           "Correct the URL and resubmit the request."),
    "MQWB0000E/method": ("The HTTP method {0} is not supported by the resource {1}.",
                         "The resource exists but does not take this HTTP method.",
                         "Resubmit the request with one of the methods in the Allow header."),
    "MQWB0001E/installation": ("The installation {0} could not be found; the REST API runs in installation {1}.",
                               "The installation named in the URL is not the installation that the REST API "
                               "runs in.",
                               "Resubmit the request naming installation {1}, or no installation name."),
    "MQWB2004E": ("The body of the request could not be parsed.",
                  "The body of the HTTP request could not be parsed, possibly due to bad formatting of the data.",
                  "Ensure the request contains valid data that matches the data format expected for the "
                  "specified HTTP resource, HTTP method, and HTTP content type."),
}

# MQ reasons whose REST status is not IBM's default 500 ("error code from IBM MQ").
_STATUS_BY_REASON: dict[int, int] = {
    MQRC.NOT_AUTHORIZED: 403,
    MQRC.UNKNOWN_OBJECT_NAME: 404,
    MQRC.UNKNOWN_ALIAS_BASE_Q: 404,
    MQRC.UNKNOWN_OBJECT_Q_MGR: 404,
    MQRC.UNKNOWN_REMOTE_Q_MGR: 404,
    MQRC.Q_DELETED: 404,
    MQRC.Q_MGR_NAME_ERROR: 404,
    # invalid data in the request (IBM: 400 "Invalid data provided")
    MQRC.MD_ERROR: 400,
    MQRC.EXPIRY_ERROR: 400,
    MQRC.FEEDBACK_ERROR: 400,
    MQRC.PERSISTENCE_ERROR: 400,
    MQRC.PRIORITY_ERROR: 400,
    MQRC.MISSING_REPLY_TO_Q: 400,
    MQRC.MSG_TYPE_ERROR: 400,
    MQRC.OBJECT_NAME_ERROR: 400,
    MQRC.WAIT_INTERVAL_ERROR: 400,
    MQRC.BUFFER_ERROR: 400,
    MQRC.MQRCCF_PARM_SYNTAX_ERROR: 400,
    # a message longer than the queue's or the queue manager's MAXMSGL is data the client sent
    # that the queue cannot take (IBM's 400), not a server fault
    MQRC.MSG_TOO_BIG_FOR_Q: 400,
    MQRC.MSG_TOO_BIG_FOR_Q_MGR: 400,
    # a body over the server's limit, refused unread (app/api/limits.py): HTTP's own status
    MQRC.DATA_LENGTH_ERROR: 413,
    # the queue manager cannot serve (IBM: 503 "Queue manager not running")
    MQRC.Q_MGR_NOT_AVAILABLE: 503,
    MQRC.Q_MGR_QUIESCING: 503,
    MQRC.Q_MGR_STOPPING: 503,
    MQRC.CONNECTION_BROKEN: 503,
    MQRC.CF_STRUC_FAILED: 503,
    MQRC.CF_NOT_AVAILABLE: 503,
    MQRC.DB2_NOT_AVAILABLE: 503,
}


@dataclass
class IbmRestError(Exception):
    """A failed IBM REST call: its HTTP status and one element of IBM's ``error`` array.

    ``qmgr_name`` is only reported by the administrative API: IBM documents the field as "not
    applicable for the messaging REST API".
    """

    status: int
    message_id: str
    inserts: tuple[Any, ...] = ()
    completion_code: int = 0
    reason_code: int = 0
    qmgr_name: str | None = None
    detail: str = ""  # emulator's own detail, appended to the explanation (never replaces IBM's text)

    def __post_init__(self) -> None:
        super().__init__(self.message)

    @property
    def shown_inserts(self) -> tuple[Any, ...]:
        """The inserts as the texts repeat them: a caller's value (a header, a query parameter,
        a path) at most ``echo``'s length, never a request's megabytes sent back."""
        return tuple(echo(i) if isinstance(i, str) else i for i in self.inserts)

    @property
    def message(self) -> str:
        template = CATALOGUE[self.message_id][0]
        shown_id = self.message_id.split("/")[0]
        return f"{shown_id}: {template.format(*self.shown_inserts)}"

    def to_body(self) -> dict[str, Any]:
        """IBM's error response body."""
        _, explanation, action = CATALOGUE[self.message_id]
        action = action.format(*self.shown_inserts)
        if self.detail:
            explanation = f"{explanation} ({bounded(self.detail)})"
        shown_id = self.message_id.split("/")[0]
        # IBM's documentation names the field messageId; mqweb itself sends msgId. Both are
        # given, so that clients written against either find it.
        item: dict[str, Any] = {"type": "rest", "messageId": shown_id, "msgId": shown_id,
                                "message": self.message, "explanation": explanation, "action": action,
                                "completionCode": self.completion_code, "reasonCode": self.reason_code}
        if self.qmgr_name:
            item["qmgrName"] = self.qmgr_name
        return {"error": [item]}


def csrf_missing() -> IbmRestError:
    """IBM: POST, PATCH and DELETE need ``ibm-mq-rest-csrf-token`` (any value, even blank)."""
    return IbmRestError(403, "MQWB0100E", (CSRF_HEADER,))


def not_authenticated(detail: str = "") -> IbmRestError:
    """401: no valid credentials (IBM's "Not authenticated")."""
    return IbmRestError(401, "MQWB0104E", (), CompCode.FAILED, MQRC.NOT_AUTHORIZED, detail=detail)


def bad_header(name: str, value: str, detail: str = "") -> IbmRestError:
    return IbmRestError(400, "MQWB0302E", (name, value), detail=detail)


def bad_query(name: str, value: str, detail: str = "") -> IbmRestError:
    return IbmRestError(400, "MQWB0302E/query", (name, value), detail=detail)


def unknown_parameter(name: str) -> IbmRestError:
    """400: a query parameter the resource does not take."""
    return IbmRestError(400, "MQWB0302E/parameter", (name,))


def unknown_resource(path: str) -> IbmRestError:
    """404: no resource of the REST API at this path."""
    return IbmRestError(404, "MQWB0000E/resource", (path,))


def method_not_allowed(method: str, path: str) -> IbmRestError:
    """405: the resource does not take this method."""
    return IbmRestError(405, "MQWB0000E/method", (method, path))


def unknown_installation(name: str, installation: str) -> IbmRestError:
    """404: ``/admin/installation/{name}`` names another installation than this one."""
    return IbmRestError(404, "MQWB0001E/installation", (name, installation))


def bad_charset(charset: str) -> IbmRestError:
    return IbmRestError(400, "MQWB0305E", (charset,))


def unsupported_media_type(detail: str = "") -> IbmRestError:
    return IbmRestError(415, "MQWB0306E", detail=detail)


def bad_body(detail: str) -> IbmRestError:
    return IbmRestError(400, "MQWB2004E", detail=detail)


def unknown_qmgr(name: str, host: str, *, admin: bool = False) -> IbmRestError:
    """``{qmgr}`` is no queue manager of this group (MQCONN would give MQRC_Q_MGR_NAME_ERROR)."""
    if admin:
        return IbmRestError(404, "MQWB0009E", (name,), CompCode.FAILED, MQRC.Q_MGR_NAME_ERROR, qmgr_name=name)
    return IbmRestError(404, "MQWB0300E", (name, host), CompCode.FAILED, MQRC.Q_MGR_NAME_ERROR)


def qmgr_unavailable(name: str, host: str, detail: str = "", *, admin: bool = False) -> IbmRestError:
    """``{qmgr}`` is a member of the group that does not run now."""
    return IbmRestError(503, "MQWB0300E", (name, host), CompCode.FAILED, MQRC.Q_MGR_NOT_AVAILABLE,
                        qmgr_name=name if admin else None, detail=detail)


def incompatible_message(queue: str, fmt: str) -> IbmRestError:
    """A message that is not text (format not MQSTR, or not UTF-8): IBM leaves it on the queue."""
    return IbmRestError(500, "MQWB0303E", (), CompCode.FAILED, 2110,  # MQRC_FORMAT_ERROR
                        detail=f"the next message on {queue} has format '{fmt.strip()}' and is not UTF-8 "
                               "text; it was left on the queue")


def from_mq_error(exc: MQError, *, action: str, target: str, qmgr: str | None = None) -> IbmRestError:
    """An MQI failure as IBM's REST API reports it.

    ``action`` is what the caller tried ("put to", "get from", "browse from") for MQWB0103E;
    ``target`` the queue name; ``qmgr`` set only for the administrative API.
    """
    if exc.reason == MQRC.NOT_AUTHORIZED:
        return IbmRestError(403, "MQWB0103E", (action, target), exc.comp, exc.reason, qmgr, exc.message)
    status = _STATUS_BY_REASON.get(exc.reason, 500)
    return IbmRestError(status, "MQWB0004E", (exc.reason, reason_name(exc.reason)), exc.comp, exc.reason,
                        qmgr, exc.message)


def from_exception(exc: BaseException, *, qmgr: str | None = None) -> IbmRestError:
    """Any failure inside an IBM REST call as IBM's error (the coupling facility, the
    repository, a bug included). ``qmgr``: the administrative API reports the queue manager."""
    if isinstance(exc, IbmRestError):
        return exc if exc.qmgr_name or not qmgr else replace(exc, qmgr_name=qmgr)
    if isinstance(exc, MQError):
        return from_mq_error(exc, action="use", target="the queue", qmgr=qmgr)
    if isinstance(exc, CFClientError):
        return from_mq_error(MQError(MQRC.CF_NOT_AVAILABLE, f"the coupling facility did not answer: {exc}"),
                             action="use", target="the queue", qmgr=qmgr)
    if isinstance(exc, RepositoryError):
        return from_mq_error(MQError(MQRC.DB2_NOT_AVAILABLE, "the shared repository did not answer"),
                             action="use", target="the queue", qmgr=qmgr)
    return IbmRestError(500, "MQWB0000E", (type(exc).__name__,), qmgr_name=qmgr)
