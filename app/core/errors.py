"""The one exception of the domain: an MQI or command call that did not complete."""

from __future__ import annotations

from app.core.reasons import MQRC, CompCode, reason_name

#: The most characters of a caller's value that an error message repeats (``echo``).
ECHO_LIMIT = 64
#: The longest error message text: a backstop behind ``echo`` for a value echoed without it.
MESSAGE_LIMIT = 1024
_ELLIPSIS = "..."


def echo(value: object, limit: int = ECHO_LIMIT) -> str:
    """A caller's value as an error message repeats it: the value itself when it is at most
    ``limit`` characters, else its first ``limit`` characters, an ellipsis and its length - so a
    60 KB value sent in a request never comes back 60 KB long in the answer."""
    text = value if isinstance(value, str) else str(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}{_ELLIPSIS} ({len(text)} characters)"


def bounded(message: str, limit: int = MESSAGE_LIMIT) -> str:
    """``message`` cut to ``limit`` characters with an ellipsis (the backstop of every error text)."""
    return message if len(message) <= limit else message[:limit - len(_ELLIPSIS)] + _ELLIPSIS


class MQError(Exception):
    """A call ended with an IBM reason code.

    ``comp`` is MQCC_FAILED unless the caller says otherwise; ``message`` is for people.
    """

    def __init__(self, reason: int, message: str = "", comp: int = CompCode.FAILED) -> None:
        self.reason = int(reason)
        self.comp = int(comp)
        self.message = bounded(message) if message else reason_name(self.reason)
        super().__init__(f"{reason_name(self.reason)} ({self.reason}): {self.message}")

    @property
    def reason_name(self) -> str:
        """IBM name of the reason code."""
        return reason_name(self.reason)

    def to_body(self) -> dict[str, object]:
        """The error body of docs/api.md §2."""
        return {
            "error": {
                "completion_code": self.comp,
                "reason": self.reason,
                "reason_name": self.reason_name,
                "message": self.message,
            }
        }


class BatchError(MQError):
    """A batch call (put-batch) that did not complete: the ``MQError`` of the message that
    stopped it and ``count``, how many messages were put before it (they stay put)."""

    def __init__(self, cause: MQError, count: int) -> None:
        super().__init__(cause.reason, cause.message, cause.comp)
        self.count = count

    @classmethod
    def of(cls, exc: MQError, count: int) -> BatchError:
        """``exc`` with ``count`` (an error that is a ``BatchError`` already keeps its count)."""
        return exc if isinstance(exc, BatchError) else cls(exc, count)

    def to_body(self) -> dict[str, object]:
        """The error body of docs/api.md §2 with ``count`` beside ``error`` and inside it."""
        body = super().to_body()
        error = body["error"]
        assert isinstance(error, dict)
        error["count"] = self.count
        body["count"] = self.count
        return body


__all__ = ["BatchError", "CompCode", "ECHO_LIMIT", "MESSAGE_LIMIT", "MQError", "MQRC", "bounded", "echo"]
