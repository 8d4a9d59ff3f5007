"""The activity store: where closed activity files go, partitioned by date and queue manager.

Layout (the same in a folder and behind a URI)::

    <store>/date=2025-06-01/qmgr=QM1/QSG1.QM1.20250601T100000.000001.5f3a9c1e.jsonl

A file appears in the store only when it is complete: in a folder by ``os.replace`` (atomic
on one file system; a copy to a hidden temporary name first when the spool is on another one),
behind a URI by an upload to a name starting with ``_`` (which Hadoop and Spark never read)
followed by a rename. So the nightly job never reads a half-written file.

Any URI that ``fsspec`` understands can be the store (``s3://``, ``gs://``, ``hdfs://`` with
the matching fsspec plug-in installed, ``memory://`` in tests); the nightly job reads the same
URI through Hadoop (``s3a://``, ``hdfs://``, ...).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Protocol


def safe_segment(name: str) -> str:
    """A QSG or QM name as a path segment: z/OS allows ``@ # $``, which URIs and Hadoop paths
    treat specially, so every character other than a letter or digit becomes ``_XX`` (hex)."""
    return re.sub(r"[^A-Za-z0-9]", lambda m: f"_{ord(m.group()):02X}", name)


def partition(date: str, qmgr: str) -> str:
    """The store's relative folder of one QM's files of one day (``date=YYYY-MM-DD/qmgr=QM1``)."""
    return f"date={date}/qmgr={safe_segment(qmgr)}"


class ActivityStore(Protocol):
    """Receives closed activity files."""

    url: str

    def ship(self, local: Path, date: str, qmgr: str) -> str:
        """Move the closed file ``local`` into the store, atomically; returns where it went.
        Raises ``OSError`` when the store cannot be reached (the caller keeps the file)."""
        ...


class FolderStore:
    """A folder on this machine (or a shared mount)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.url = str(self.root)

    def ship(self, local: Path, date: str, qmgr: str) -> str:
        dest_dir = self.root / partition(date, qmgr)
        dest_dir.mkdir(parents=True, exist_ok=True)
        dest = dest_dir / local.name
        try:
            os.replace(local, dest)  # atomic within one file system
        except OSError as exc:
            if exc.errno != 18:  # EXDEV: the spool is on another file system
                raise
            # A hidden name first ('.' is skipped by Hadoop and Spark), then an atomic rename.
            tmp = dest_dir / f".{local.name}.part"
            shutil.copyfile(local, tmp)
            with open(tmp, "rb") as f:
                os.fsync(f.fileno())
            os.replace(tmp, dest)
            local.unlink()
        return str(dest)


class FsspecStore:
    """Any URI fsspec can write to."""

    def __init__(self, url: str) -> None:
        import fsspec

        self.url = url.rstrip("/")
        self.fs, self.root = fsspec.core.url_to_fs(self.url)
        self.root = self.root.rstrip("/")

    def ship(self, local: Path, date: str, qmgr: str) -> str:
        dest_dir = f"{self.root}/{partition(date, qmgr)}"
        dest = f"{dest_dir}/{local.name}"
        tmp = f"{dest_dir}/_{local.name}.part"  # '_' names are invisible to Hadoop readers
        try:
            self.fs.makedirs(dest_dir, exist_ok=True)
            self.fs.put_file(str(local), tmp)
            self.fs.mv(tmp, dest)
        except Exception as exc:  # fsspec back-ends raise their own errors: one kind for the caller
            if isinstance(exc, OSError):
                raise
            raise OSError(f"cannot ship {local.name} to {self.url}: {exc}") from exc
        local.unlink()
        return dest


def open_store(url: str) -> ActivityStore:
    """The store for a folder path or a URI (``file://`` is a folder too)."""
    if "://" not in url:
        return FolderStore(url)
    if url.startswith("file://"):
        return FolderStore(url[len("file://"):])
    return FsspecStore(url)
