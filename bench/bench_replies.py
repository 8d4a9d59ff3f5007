"""Micro-benchmark of the CF reply types' ``parse()`` (the MQPUT/MQGET path): us per call.

    python -m bench.bench_replies
"""

from __future__ import annotations

import timeit

from app.cf.replies import GetReply, OpenReply, PutReply
from app.cf.results import GetResult, PutResult

PUT_RAW = [0, 5, 1234, 4, 5, 1, 2, 1, 0, 0, -1, -1, b""]
GET_RAW = [0, b'{"format": "MQSTR", "priority": 4}', b"hello world", 11, 0, 1, b"0000000000001234",
           4, 5, 4, 1234, 0, 0, 0, 0, 0, 0]
GET_EMPTY_RAW = [2033, 0, 0, 0]
OPEN_RAW = [0, 3, 1, 1, 0]


def put_result(raw: list[object]) -> PutResult:
    """What Messaging._put_result builds from the reply (without events and logging)."""
    r = PutReply.parse(raw)
    return PutResult(r.seq, r.depth_after, r.depth_before, r.depth_after, r.available_after, r.visible,
                     r.depth_before == 0, r.ipprocs, r.opprocs,
                     tuple(e for e in (r.depth_event, r.service_event) if e), (r.trig_before, r.trig_after))


def get_result(raw: list[object]) -> GetResult:
    """What Messaging._get_once builds from the reply (without events)."""
    r = GetReply.parse(raw)
    depth = r.depth_after
    return GetResult(r.md, r.data, r.data_length, r.backout_count, r.persistent, r.cursor, depth, r.code == 2079,
                     r.depth_before, depth, r.available_after, r.id, False, r.syncpoint, r.code, r.expiry_ms)


def main(n: int = 200_000) -> None:
    cases = {
        "PutReply.parse (success)": lambda: PutReply.parse(PUT_RAW),
        "PutReply.parse + PutResult": lambda: put_result(PUT_RAW),
        "GetReply.parse (message)": lambda: GetReply.parse(GET_RAW),
        "GetReply.parse (no message)": lambda: GetReply.parse(GET_EMPTY_RAW),
        "GetReply.parse + GetResult": lambda: get_result(GET_RAW),
        "OpenReply.parse": lambda: OpenReply.parse(OPEN_RAW),
    }
    for label, fn in cases.items():
        best = min(timeit.repeat(fn, number=n, repeat=15)) / n * 1e6
        print(f"{label:32s} {best:6.2f} us")


if __name__ == "__main__":
    main()
