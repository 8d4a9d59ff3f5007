"""Namelists as the MQI sees them: MQOPEN with ObjectType MQOT_NAMELIST (for MQINQ only, as IBM
allows) and MQINQ of MQCA_NAMES, MQIA_NAME_COUNT, MQIA_NAMELIST_TYPE, MQCA_NAMELIST_DESC. The
definitions are the MQSC layer's (DEFINE NAMELIST); this reads them from the QM's cache."""

from __future__ import annotations

from typing import Any

from app.core.errors import MQError
from app.core.names import is_object_name
from app.core.objects import ObjectDef
from app.core.reasons import MQRC
from app.qmgr.definitions import DefinitionCache
from app.qmgr.display import display_object


def find(cache: DefinitionCache, name: Any) -> ObjectDef:
    """The namelist an MQOPEN names on this QM (its QMGR or COPY definition); MQRC_UNKNOWN_OBJECT_NAME
    (2085) when there is none, MQRC_OBJECT_NAME_ERROR for a name that is not one."""
    if not isinstance(name, str) or not is_object_name(name.strip()):
        raise MQError(MQRC.OBJECT_NAME_ERROR, f"'{name}' is not a namelist name")
    found = cache.usable("NAMELIST", name.strip())
    if not found:
        raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"namelist '{name.strip()}' is not defined on {cache.qmgr}")
    return found[0]


def attributes_of(cache: DefinitionCache, name: str) -> dict[str, Any]:
    """An opened namelist's attributes by MQSC name (as DISPLAY NAMELIST shows them), read now:
    an ALTER since the open is seen, as IBM's MQINQ sees it."""
    return display_object(find(cache, name))
