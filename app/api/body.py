"""Request bodies of the hot-path verbs (MQPUT, MQPUT1, MQGET), parsed with orjson and
validated with the same Pydantic models FastAPI would use, without FastAPI's per-request body
machinery (about a tenth of an MQPUT's cost; see bench/). Errors take the same route to an
MQ reason code as any other malformed request."""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar

import orjson
from fastapi import Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError
from starlette.requests import ClientDisconnect

M = TypeVar("M", bound=BaseModel)

#: Scanning steps between two yields to the event loop while a body's values are counted.
_STEPS_PER_YIELD = 2000


def _invalid_json(message: str) -> RequestValidationError:
    return RequestValidationError([{"loc": ("body",), "msg": f"invalid JSON: {message}", "type": "json_invalid"}])


async def values_within(raw: bytes | str, budget: int) -> bool:
    """Whether the JSON text ``raw`` holds at most about ``budget`` values (objects, arrays,
    strings, numbers), found without parsing it: parsing a body of millions of tiny values takes
    seconds of the event loop and gigabytes (a 13 MB put-batch of 1,000,000 ``{"data":"x"}``),
    so such a body is refused before it is parsed.

    First a count at C speed of the characters that start or separate values (an upper bound: it
    counts them inside strings too); only when that is over the budget are the strings skipped one
    by one, with the steps themselves bounded and the event loop given a turn every few thousand."""
    if isinstance(raw, str):  # a WebSocket text frame: encoded only when the quick count is over
        if 2 * (raw.count(",") + raw.count("{") + raw.count("[")) + 1 <= budget:
            return True
        raw = raw.encode()
    quick = raw.count(b",") + raw.count(b"{") + raw.count(b"[")
    if 2 * quick + 1 <= budget:
        return True
    structural = steps = pos = 0
    size = len(raw)
    while pos < size:
        quote = raw.find(b'"', pos)
        gap_end = size if quote < 0 else quote
        structural += raw.count(b",", pos, gap_end) + raw.count(b"{", pos, gap_end) + raw.count(b"[", pos, gap_end)
        if 2 * structural + 1 > budget:
            return False
        if quote < 0:
            return True
        # skip the string: its end is the next quote not escaped by an odd run of backslashes
        pos = quote + 1
        while True:
            steps += 1
            if steps > 4 * budget:
                return False  # so many strings and escaped quotes: no message batch looks like that
            if steps % _STEPS_PER_YIELD == 0:
                await asyncio.sleep(0)
            end = raw.find(b'"', pos)
            if end < 0:
                return True  # unterminated: the parser refuses it, at once
            run = 0
            while end - run - 1 >= pos and raw[end - run - 1] == 0x5C:  # backslashes before the quote
                run += 1
                if run % 64 == 0:
                    steps += 1
            pos = end + 1
            if run % 2 == 0:
                break
    return True


async def request_body(request: Request) -> bytes:
    """``request.body()``: the same bytes (kept on the request for a later ``body()``), the same
    ``ClientDisconnect``, without Starlette's stream machinery (an async generator closed by
    ``aclosing`` for every request, which costs a hot call more than the body's message itself)."""
    body: bytes | None = getattr(request, "_body", None)
    if body is not None:
        return body
    if request._stream_consumed:
        raise RuntimeError("Stream consumed")
    chunks: list[bytes] = []
    while True:
        message = await request._receive()
        if message["type"] == "http.request":
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        elif message["type"] == "http.disconnect":
            request._is_disconnected = True
            raise ClientDisconnect()
    request._stream_consumed = True
    body = request._body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    return body


async def read_json(request: Request, *, budget: int | None = None) -> Any:
    """The request's JSON body (``{}`` when empty); with ``budget``, refused with
    ``TooManyValues`` when it holds more values than that, before it is parsed."""
    raw = await request_body(request)
    if not raw:
        return {}
    if budget is not None and not await values_within(raw, budget):
        raise TooManyValues(budget)
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise _invalid_json(str(exc)) from None


class TooManyValues(Exception):
    """A body holds more JSON values than its call can need (``read_json``)."""

    def __init__(self, budget: int) -> None:
        super().__init__(f"the body holds more than {budget} JSON values")
        self.budget = budget


async def parse_body(request: Request, model: type[M], *, budget: int | None = None) -> M:
    """The request's JSON body as ``model``; an empty body means the model's defaults. With
    ``budget``, a body of more JSON values than that is refused before it is parsed, as a
    malformed body (``read_json``)."""
    try:
        data = await read_json(request, budget=budget)
    except TooManyValues as exc:
        raise _invalid_json(str(exc)) from None
    return validate(data, model)


def validate(data: Any, model: type[M]) -> M:
    """``data`` (parsed JSON) as ``model``; failures as FastAPI's RequestValidationError."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise RequestValidationError([{**e, "loc": ("body", *e["loc"])} for e in exc.errors()]) from None


def documented(model: type[BaseModel], *, required: bool = True) -> dict[str, Any]:
    """``openapi_extra`` that shows ``model`` as the request body in /docs."""
    return {"requestBody": {"required": required,
                            "content": {"application/json": {"schema": model.model_json_schema()}}}}
