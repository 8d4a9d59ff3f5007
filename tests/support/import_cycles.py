"""``python -m tests.support.import_cycles [package ...]``: print every import cycle among the
modules of the packages (default: app), counting function-local and TYPE_CHECKING imports;
exit 1 if there is any (for CI), 0 if none."""

from __future__ import annotations

import sys

from tests.support.import_graph import cycles


def report(packages: list[str]) -> tuple[int, str]:
    found = cycles(*packages)
    lines = []
    for component, inside in found:
        lines.append(f"cycle of {len(component)} modules: {', '.join(component)}")
        lines.extend(f"    {imp.where()}" for imp in inside)
    lines.append(f"{len(found)} import cycle(s) in {', '.join(packages)}" if found
                 else f"no import cycles in {', '.join(packages)}")
    return len(found), "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    count, text = report(list(argv if argv is not None else sys.argv[1:]) or ["app"])
    print(text)
    return 1 if count else 0


if __name__ == "__main__":
    sys.exit(main())
