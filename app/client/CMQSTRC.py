"""Value-to-name dictionaries of the MQ constants, as IBM's ``ibmmq.CMQSTRC`` offers them:
``CMQSTRC.MQRC_DICT[2033] == "MQRC_NO_MSG_AVAILABLE"``, ``MQIA_DICT``, ``MQCA_DICT`` and so on.
Built from ``CMQC``, ``CMQXC`` and ``CMQCFC`` at import, so they name exactly what those modules
hold; where several names share a value (MQRO_NONE and MQRO_NEW_MSG_ID) the first defined wins."""

# ruff: noqa: N999 - the module is named like IBM's.

from __future__ import annotations

from types import ModuleType

import app.client.CMQC as CMQC
import app.client.CMQCFC as CMQCFC
import app.client.CMQXC as CMQXC


def _names(prefix: str, *modules: ModuleType) -> dict[int, str]:
    """{value: name} of the integer constants whose names start with ``prefix`` (e.g. "MQRC_")."""
    out: dict[int, str] = {}
    for module in modules:
        for name, value in vars(module).items():
            if name.startswith(prefix) and isinstance(value, int) and not isinstance(value, bool):
                out.setdefault(value, name)
    return out


_ALL = (CMQC, CMQXC, CMQCFC)
MQRC_DICT = _names("MQRC_", *_ALL)
MQCC_DICT = _names("MQCC_", *_ALL)
MQIA_DICT = _names("MQIA_", *_ALL)
MQCA_DICT = _names("MQCA_", *_ALL)
MQIACF_DICT = _names("MQIACF_", *_ALL)
MQCACF_DICT = _names("MQCACF_", *_ALL)
MQIACH_DICT = _names("MQIACH_", *_ALL)
MQCACH_DICT = _names("MQCACH_", *_ALL)
MQCMD_DICT = _names("MQCMD_", *_ALL)
MQOT_DICT = _names("MQOT_", *_ALL)
MQQT_DICT = _names("MQQT_", *_ALL)
MQMT_DICT = _names("MQMT_", *_ALL)
MQFB_DICT = _names("MQFB_", *_ALL)
MQPER_DICT = _names("MQPER_", *_ALL)
MQCHT_DICT = _names("MQCHT_", *_ALL)
MQXPT_DICT = _names("MQXPT_", *_ALL)
MQPL_DICT = _names("MQPL_", *_ALL)
MQCBCT_DICT = _names("MQCBCT_", *_ALL)  # callback call types (asynchronous consume)
MQCBT_DICT = _names("MQCBT_", *_ALL)
MQCS_DICT = _names("MQCS_", *_ALL)
MQTYPE_DICT = _names("MQTYPE_", *_ALL)  # message property types
MQQA_GET_DICT = _names("MQQA_GET_", *_ALL)
MQQA_PUT_DICT = _names("MQQA_PUT_", *_ALL)
MQSTAT_DICT = _names("MQSTAT_TYPE_", *_ALL)
