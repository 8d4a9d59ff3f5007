"""Run a page of the documentation site as its reader would (tests/test_docs_labs*.py).

A lab or guide page is a sequence of fenced blocks. Its ``bash`` blocks are the commands, run in
order in one bash (variables carry over), in the folder where the reader ran ``qsg up`` (a
``docs`` link there points at this clone's docs/, so ``. docs/labs/lab.sh`` works). Its ``text``
blocks are what to look for: every non-blank line of one must appear in what the bash blocks
before it (since the previous ``text`` block) printed - or, for a block titled
``title="qsg up terminal"``, in what ``qsg up`` printed. The reader's set-up (``python3 -m
venv``, run by .ci/run) and other terminal (``qsg up``, ``pytest``) are left out of the commands:
the test runs ``qsg up`` itself (``QsgUp``) and never ``pytest``. The page's ports (entry point
9440, QM1..QM3 9441..9443) become the test's, and so do the ``QM1``..``QM3`` of
docs/labs/lab.sh. Other blocks (a diagram, a benchmark's quoted output: a fence without a
language, or another language) are neither run nor checked.

A guide that needs no group (it runs a benchmark of the clone, starts a Spark cluster) is run in
a ``Clone``: a folder with links to the clone's docs/ and bench/. A page's other settings are
shell variables with the reader's defaults (``RECORDS=${RECORDS:-3000000}``), which the test
sets (``run_page(..., env=...)``). What a page leaves running in the background (``... &``) is
stopped with its shell's process group when the page ends.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.ports import free_port_block

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
FENCE = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```\s*$", re.S | re.M)
MARK = "@@lab-block-done@@"


@dataclass
class Block:
    """One fenced block of a page: its language, its info string after it, its text."""

    lang: str
    info: str
    text: str


def blocks(page: str) -> list[Block]:
    """The ``bash`` and ``text`` blocks of docs/``page``, in order."""
    source = (DOCS / page).read_text()
    return [Block(m.group(1), m.group(2).strip(), m.group(3)) for m in FENCE.finditer(source)
            if m.group(1) in ("bash", "text")]


def qsg_up_command(page: str) -> tuple[dict[str, str], list[str]]:
    """The environment and options a page starts ``qsg up`` with (``QSG_ACTIVITY_ROTATE_S=5 qsg
    up``, ``qsg up --tls``)."""
    for block in blocks(page):
        for line in block.text.splitlines() if block.lang == "bash" else ():
            found = re.match(r"\s*((?:\w+=\S+\s+)*)qsg up\b([^#]*)", line)
            if found:
                return dict(pair.split("=", 1) for pair in found.group(1).split()), found.group(2).split()
    return {}, []


@dataclass
class QsgUp:
    """``qsg up`` run as the reader runs it, in ``folder`` (its default ``--dir .qsg``), on free
    ports; ``output`` is its terminal so far."""

    folder: Path
    extra_env: dict[str, str] = field(default_factory=dict)
    extra_args: list[str] = field(default_factory=list)
    base: int = 0
    proc: subprocess.Popen | None = None
    lines: list[str] = field(default_factory=list)

    def start(self, timeout_s: float = 420) -> QsgUp:
        self.folder.mkdir(parents=True, exist_ok=True)
        link = self.folder / "docs"
        if not link.exists():
            link.symlink_to(DOCS)
        self.base = free_port_block(4)
        self.proc = subprocess.Popen([sys.executable, "-m", "app.cli", "up", "--base-port", str(self.base + 1),
                                      *self.extra_args],
                                     cwd=self.folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     env={**self.env(), **self.extra_env})
        ready = threading.Event()

        def read() -> None:
            assert self.proc is not None and self.proc.stdout is not None
            for line in self.proc.stdout:
                self.lines.append(line)
                if "Ctrl-C stops the group" in line or line.startswith("qsg up:"):
                    ready.set()
            ready.set()

        threading.Thread(target=read, daemon=True).start()
        assert ready.wait(timeout_s), f"qsg up not up in {timeout_s}s:\n{self.output}"
        assert "Ctrl-C stops the group" in self.output, self.output
        return self

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def env(self) -> dict[str, str]:
        """The reader's shell: the installed ``qsg`` on the PATH, and the URLs docs/labs/lab.sh
        defaults to qsg up's ports for (QM1..QM3) set to this group's."""
        return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
                **{f"QM{n}": self.url(n) for n in (1, 2, 3)}}

    def ports(self, text: str) -> str:
        """``text`` with the page's ports (9440..9443) made this group's."""
        return re.sub(r"\b944([0-3])\b", lambda m: str(self.base + int(m.group(1))), text)

    @classmethod
    def for_page(cls, folder: Path, page: str) -> QsgUp:
        """The group a page starts (its ``qsg up`` line's environment and options)."""
        env, args = qsg_up_command(page)
        return cls(folder, extra_env=env, extra_args=args)

    def url(self, n: int) -> str:
        return f"{'https' if '--tls' in self.extra_args else 'http'}://127.0.0.1:{self.base + n}"

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@dataclass
class Clone:
    """A reader's shell in a clone of the project, with no group started: ``folder`` gets links to
    the clone's docs/ and bench/, as the clone's own root has them."""

    folder: Path
    output: str = ""  # no qsg up terminal

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        for name in ("docs", "bench"):
            link = self.folder / name
            if not link.exists():
                link.symlink_to(ROOT / name)

    def env(self) -> dict[str, str]:
        """The reader's shell: the installed ``qsg`` and ``python`` on the PATH."""
        return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}

    def ports(self, text: str) -> str:
        return text


def _script(block: Block) -> str:
    """The commands of a bash block, without the reader's set-up (run by .ci/run) and other
    terminal (qsg up, pytest)."""
    return "\n".join(line for line in block.text.splitlines()
                     if not re.match(r"\s*((\w+=\S+\s+)*qsg up|pytest|python3 -m venv)\b", line))


def run_page(page: str, group: QsgUp | Clone, timeout_s: float = 300, env: dict[str, str] | None = None) -> str:
    """Run the bash blocks of docs/``page`` against ``group`` (or in a ``Clone``) and check every
    text block; ``env``: values for the page's variables. Returns the commands' whole output (for
    the test's own further checks)."""
    parts = blocks(page)
    assert any(b.lang == "bash" for b in parts), f"{page} has no commands"
    script = ["set -eo pipefail"]
    for b in parts:
        if b.lang == "bash":
            script += [group.ports(_script(b)), f"echo {MARK}"]
    started = time.monotonic()
    # A session of its own: whatever the page started in the background goes with its group.
    proc = subprocess.Popen(["bash", "-c", "\n".join(script)], cwd=group.folder, env={**group.env(), **(env or {})},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        stderr += f"\n(timed out after {timeout_s}s)"
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # nothing left running
    done = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    trace = f"--- stdout\n{done.stdout[-6000:]}\n--- stderr\n{done.stderr[-3000:]}\n--- qsg up\n{group.output[-3000:]}"
    assert done.returncode == 0, f"{page}: the commands failed ({time.monotonic() - started:.0f}s)\n{trace}"
    outputs = done.stdout.split(MARK + "\n")
    seen, index = "", 0
    for b in parts:
        if b.lang == "bash":
            seen += outputs[index]
            index += 1
            continue
        where = group.output if "qsg up terminal" in b.info else seen
        for line in b.text.splitlines():
            if line.strip():
                assert group.ports(line.strip()) in where, f"{page}: not seen: {line.strip()!r}\n{trace}"
        seen = ""
    return done.stdout
