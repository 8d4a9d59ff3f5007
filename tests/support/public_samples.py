"""Run public MQ Python samples against a local group, unchanged but for the import line and the
connection details, and print pass/fail per sample (README "Working with IBM MQ tools and pymqi
code" keeps the table). Opt-in, never collected by pytest (no test_ prefix): give it checkouts
you fetched yourself; nothing of theirs is kept here.

    python -m tests.support.public_samples /path/to/pymqi/code/examples /path/to/mq-mqi-python/code/examples

Each sample is copied to a temporary directory with ``import pymqi`` / ``import ibmmq [as x]``
turned into ``import qsg_pymqi as ...`` and port 1414 into QM1's REST port, the queues it names
are defined first (as local queues of QM1), one text message is put first on them when the
sample only gets, and the copy runs as a subprocess with a timeout. A sample passes when it
exits 0 within the timeout; "timeout" is reported for programs that run until interrupted.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.support.cluster import Cluster
from tests.support.redis_server import RedisServer

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 20
_QUEUE = re.compile(r"""['"]([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)+)['"]""")
_NOT_QUEUES = ("SYSTEM.", "CMQC.")
_IMPORTS = ((re.compile(r"^import pymqi\b(?! as)", re.M), "import qsg_pymqi as pymqi"),
            (re.compile(r"^import ibmmq as (\w+)", re.M), r"import qsg_pymqi as \1"),
            (re.compile(r"^import ibmmq\b(?! as)", re.M), "import qsg_pymqi as ibmmq"),
            (re.compile(r"^from (?:pymqi|ibmmq) import", re.M), "from qsg_pymqi import"))


def adapted(source: str, port: int) -> str:
    """The sample with only the import line and the connection details changed."""
    for pattern, replacement in _IMPORTS:
        source = pattern.sub(replacement, source)
    source = re.sub(r"""(['"])[\w.-]+\((\d+)\)\1""", lambda m: f"{m.group(1)}127.0.0.1({port}){m.group(1)}", source)
    source = re.sub(r"""(['"])QM01\1""", r"\1QM1\1", source)
    return re.sub(r"(['\"]?)1414\1", lambda m: f"{m.group(1)}{port}{m.group(1)}", source)


def run_samples(directories: list[Path]) -> list[tuple[str, str, str]]:
    """(sample, result, detail) of every ``*.py`` under ``directories``."""
    redis = RedisServer()
    redis.start()
    work = Path(tempfile.mkdtemp(prefix="qsg-samples-"))
    group = Cluster(redis.url, f"sqlite:///{work / 'qsg.db'}", work, extra_env={})
    results = []
    try:
        group.start(["QM1", "QM2"])
        port = group.qms["QM1"].port
        # what `qsg up` defines for a new group: a dead-letter queue the queue manager names
        group.mqsc("QM1", "DEFINE QLOCAL(SYSTEM.DEAD.LETTER.QUEUE)\nALTER QMGR DEADQ(SYSTEM.DEAD.LETTER.QUEUE)")
        for directory in directories:
            for path in sorted(directory.glob("*.py")):
                results.append(_run_one(group, path, port, work))
    finally:
        group.stop()
        redis.cleanup()
    return results


def _run_one(group: Cluster, path: Path, port: int, work: Path) -> tuple[str, str, str]:
    source = path.read_text(encoding="utf-8", errors="replace")
    queues = sorted(q for q in set(_QUEUE.findall(source))
                    if not q.startswith(_NOT_QUEUES) and not q.endswith("SVRCONN"))
    if queues and "MQCMD_CREATE_Q" in source:
        group.mqsc("QM1", "\n".join(f"DELETE QLOCAL({q})" for q in queues))  # the sample defines it by PCF
    elif queues:
        group.mqsc("QM1", "\n".join(f"DEFINE QLOCAL({q}) REPLACE" for q in queues))
        group.mqsc("QM1", "\n".join(f"CLEAR QLOCAL({q})" for q in queues))
        if ".get(" in source and ".put(" not in source and "put1(" not in source:
            _put_first(group, queues)
    copy = work / f"{path.parent.parent.name}_{path.name}"
    copy.write_text(adapted(source, port), encoding="utf-8")
    try:
        done = subprocess.run([sys.executable, str(copy)], cwd=path.parent, capture_output=True, text=True,
                              timeout=TIMEOUT_S, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin",
                                                      # where a program that names no connection connects
                                                      "MQSERVER": f"DEV.APP.SVRCONN/TCP/127.0.0.1({port})"})
    except subprocess.TimeoutExpired:
        return f"{path.parent.parent.parent.name}/{path.name}", "timeout", f"still running after {TIMEOUT_S}s"
    name = f"{path.parent.parent.parent.name}/{path.name}"
    if done.returncode == 0:
        return name, "pass", ""
    last = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
    return name, "fail", last[:200]


def _put_first(group: Cluster, queues: list[str]) -> None:
    import app.client as pymqi

    qmgr = pymqi.connect("QM1", conn_info=f"127.0.0.1({group.qms['QM1'].port})")
    try:
        for q in queues:
            pymqi.Queue(qmgr, q).put("a message put first by the sample runner")
    finally:
        qmgr.disconnect()


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    for name, result, detail in run_samples([Path(a) for a in argv]):
        print(f"{result:8} {name}  {detail}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
