"""What the pymqi-shaped client's tests share: pymqi's connection name of a QM, connections
made by name and disconnected after the test, and the MQMIError a call raises."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

import app.client as pymqi


def conn_name(group, qm: str = "QM1") -> str:
    """The pymqi connection name (host(port)) of a queue manager's REST port."""
    return f"127.0.0.1({group.qms[qm].port})"


def connections(group) -> Iterator[Callable[..., pymqi.QueueManager]]:
    """Body of a ``connect`` fixture: yields ``connect(qm="QM1")`` (pymqi.connect to that QM)
    and disconnects what it made when the test ends."""
    made: list[pymqi.QueueManager] = []

    def connect(qm: str = "QM1") -> pymqi.QueueManager:
        qmgr = pymqi.connect(qm, "DEV.APP.SVRCONN", conn_name(group, qm))
        made.append(qmgr)
        return qmgr

    yield connect
    for qmgr in made:
        if qmgr.is_connected:
            qmgr.disconnect()


def reason_of(call) -> pymqi.MQMIError:
    """The MQMIError ``call()`` raises."""
    with pytest.raises(pymqi.MQMIError) as caught:
        call()
    return caught.value
