"""The emulator's pymqi-shaped client under a top-level name, so that a pymqi (or IBM ibmmq)
program moves over by changing one line: ``import qsg_pymqi as pymqi`` (or ``as mq``).

It is ``app.client`` itself: ``qsg_pymqi.CMQC``, ``qsg_pymqi.Queue`` and also
``from qsg_pymqi import CMQC, CMQXC`` and ``import qsg_pymqi.CMQC`` name the same objects.
Connection names ``host(port)`` are queue managers' REST addresses; see README "Working with IBM
MQ tools and pymqi code".
"""

import sys

import app.client
from app.client import *  # noqa: F403 - the whole client is this module's interface
from app.client import CMQC, CMQCFC, CMQSTRC, CMQXC, __all__, __version__, aio, get_versions  # noqa: F401

# ``import qsg_pymqi.CMQC`` and ``from qsg_pymqi.CMQC import X`` find the submodules too.
for _name in ("CMQC", "CMQCFC", "CMQSTRC", "CMQXC", "aio"):
    sys.modules[f"{__name__}.{_name}"] = getattr(app.client, _name)
