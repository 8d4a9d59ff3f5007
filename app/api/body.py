"""Request bodies of the hot-path verbs (MQPUT, MQPUT1, MQGET), parsed with orjson and
validated with the same Pydantic models FastAPI would use, without FastAPI's per-request body
machinery (about a tenth of an MQPUT's cost; see bench/). Errors take the same route to an
MQ reason code as any other malformed request."""

from __future__ import annotations

from typing import Any, TypeVar

import orjson
from fastapi import Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)


async def parse_body(request: Request, model: type[M]) -> M:
    """The request's JSON body as ``model``; an empty body means the model's defaults."""
    raw = await request.body()
    try:
        data = orjson.loads(raw) if raw else {}
    except orjson.JSONDecodeError as exc:
        raise RequestValidationError(
            [{"loc": ("body",), "msg": f"invalid JSON: {exc}", "type": "json_invalid"}]) from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise RequestValidationError([{**e, "loc": ("body", *e["loc"])} for e in exc.errors()]) from None


def documented(model: type[BaseModel], *, required: bool = True) -> dict[str, Any]:
    """``openapi_extra`` that shows ``model`` as the request body in /docs."""
    return {"requestBody": {"required": required,
                            "content": {"application/json": {"schema": model.model_json_schema()}}}}
