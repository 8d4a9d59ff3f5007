"""The HTML report of a day, rendered from its JSON summary alone (so it can be re-rendered
without Spark): matplotlib charts as inline SVG and jinja2, nothing loaded from the network."""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

_env = Environment(loader=PackageLoader("app.reports", "templates"), autoescape=select_autoescape(["html", "j2"]))

_COLORS = ["#1f5f9e", "#e07b1a", "#2e8b57", "#b03a48", "#6a4c93", "#8c6d1f", "#3c8dbc", "#7f7f7f"]


def _num(value: Any, digits: int = 1) -> str:
    """Integers with thousands separators, other numbers rounded, nothing as a dash."""
    if value is None:
        return "\u2013"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return str(value)


def _pct(value: Any) -> str:
    return "\u2013" if value is None else f"{100 * value:.1f}%"


_env.filters["num"] = _num
_env.filters["pct"] = _pct


def _figure(width: float = 8.0, height: float = 3.2) -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("Agg")  # no display on servers
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.fonttype": "none", "font.size": 9, "axes.spines.top": False,
                         "axes.spines.right": False})
    return plt.subplots(figsize=(width, height))


def _integer_axis(axis: Any) -> None:
    """Counts have no fractions: ticks on whole numbers only."""
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True))


def _svg(fig: Any, chart_id: str) -> str:
    """The figure as an inline ``<svg>`` element. Each chart gets its own hash salt, so the
    clip-path ids of several charts in one page never collide."""
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = chart_id
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    # A size that follows the page: the viewBox keeps the aspect ratio.
    text = re.sub(r'<svg([^>]*?) width="[^"]+" height="[^"]+"', r'<svg\1 width="100%"', text, count=1)
    return text.replace("<svg", f'<svg role="img" data-chart="{chart_id}"', 1)


def _empty(ax: Any, text: str = "no activity") -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="#777")
    ax.set_xticks([])
    ax.set_yticks([])


def chart_hourly(summary: dict[str, Any]) -> str:
    """Puts and gets of the whole group per hour."""
    import numpy as np

    hours = summary["hourly"]
    fig, ax = _figure()
    x = np.arange(24)
    puts = [0] * 24
    gets = [0] * 24
    for row in hours:
        puts[row["hour"]] = row["puts"]
        gets[row["hour"]] = row["gets"]
    ax.bar(x - 0.2, puts, width=0.4, label="puts", color=_COLORS[0])
    ax.bar(x + 0.2, gets, width=0.4, label="gets", color=_COLORS[1])
    ax.set_xticks(x)
    ax.set_xlabel("hour (UTC)")
    ax.set_ylabel("messages")
    _integer_axis(ax.yaxis)
    ax.legend(frameon=False)
    return _svg(fig, "hourly")


def chart_share(summary: dict[str, Any]) -> str:
    """Each QM's share of the work (puts + gets) on every shared queue."""
    shares = summary["queue_share"]
    queues = sorted({r["queue"] for r in shares})
    qmgrs = sorted({r["qmgr"] for r in shares})
    fig, ax = _figure(height=max(1.6, 0.5 * len(queues) + 1.0))
    if not queues:
        _empty(ax, "no shared queue was used")
        return _svg(fig, "share")
    left = [0.0] * len(queues)
    for i, qm in enumerate(qmgrs):
        values = []
        for q in queues:
            row = next((r for r in shares if r["queue"] == q and r["qmgr"] == qm), None)
            values.append(100 * (row["work_share"] or 0) if row else 0.0)
        bars = ax.barh(queues, values, left=left, label=qm, color=_COLORS[i % len(_COLORS)])
        for bar, v in zip(bars, values, strict=True):
            if v >= 8:
                ax.text(bar.get_x() + bar.get_width() / 2, bar.get_y() + bar.get_height() / 2, f"{v:.0f}%",
                        ha="center", va="center", color="white", fontsize=8)
        left = [a + b for a, b in zip(left, values, strict=True)]
    ax.set_xlim(0, 100)
    ax.set_xlabel("share of puts + gets (%)")
    ax.legend(frameon=False, ncol=len(qmgrs), loc="upper center", bbox_to_anchor=(0.5, -0.25))
    return _svg(fig, "share")


def chart_residency(summary: dict[str, Any]) -> str:
    """Residency percentiles of the queues with the most gets."""
    import numpy as np

    rows = [r for r in summary["queues"] if r["gets"]]
    rows = sorted(rows, key=lambda r: -r["gets"])[:10]
    fig, ax = _figure()
    if not rows:
        _empty(ax, "no message was got")
        return _svg(fig, "residency")
    x = np.arange(len(rows))
    keys = [("residency_p50_ms", "p50"), ("residency_p95_ms", "p95"), ("residency_p99_ms", "p99"),
            ("residency_max_ms", "max")]
    for i, (key, label) in enumerate(keys):
        ax.bar(x + (i - 1.5) * 0.2, [r[key] or 0 for r in rows], width=0.2, label=label, color=_COLORS[i])
    ax.set_xticks(x, [r["queue"] for r in rows], rotation=15, ha="right")
    ax.set_xlim(-0.6, max(len(rows), 3) - 0.4)  # a single queue gets bars of a normal width
    ax.set_ylabel("residency (ms)")
    ax.legend(frameon=False, ncol=4, loc="lower center", bbox_to_anchor=(0.5, 1.0))
    return _svg(fig, "residency")


def chart_depth(summary: dict[str, Any]) -> str:
    """Peak depth per hour of the busiest queues."""
    rows = summary["queue_hourly"]
    observed = {r["queue"] for r in rows if r["peak_depth"] is not None}
    busiest = [r["queue"] for r in summary["queues"] if r["queue"] in observed][:5]
    fig, ax = _figure()
    if not busiest:
        _empty(ax)
        return _svg(fig, "depth")
    for i, q in enumerate(busiest):
        peak = [None] * 24
        for r in rows:
            if r["queue"] == q and r["peak_depth"] is not None:
                peak[r["hour"]] = max(peak[r["hour"]] or 0, r["peak_depth"])
        hours = [h for h in range(24) if peak[h] is not None]
        ax.plot(hours, [peak[h] for h in hours], marker="o", label=q, color=_COLORS[i % len(_COLORS)])
    ax.set_xlim(-0.5, 23.5)
    ax.set_xticks(range(0, 24, 2))
    ax.set_xlabel("hour (UTC)")
    ax.set_ylabel("peak depth")
    ax.set_ylim(bottom=0, top=max(1.0, ax.get_ylim()[1]))  # depth starts at an empty queue
    _integer_axis(ax.yaxis)
    ax.legend(frameon=False, fontsize=8)
    return _svg(fig, "depth")


def _barh(items: list[tuple[str, float]], chart_id: str, xlabel: str, empty: str) -> str:
    fig, ax = _figure(height=max(1.6, 0.35 * len(items) + 1.0))
    if not items:
        _empty(ax, empty)
        return _svg(fig, chart_id)
    labels = [k for k, _ in items][::-1]
    values = [v for _, v in items][::-1]
    bars = ax.barh(labels, values, color=_COLORS[0])
    for bar, v in zip(bars, values, strict=True):
        ax.text(bar.get_width(), bar.get_y() + bar.get_height() / 2, f" {v:,.0f}", va="center", fontsize=8)
    ax.set_xlabel(xlabel)
    _integer_axis(ax.xaxis)
    return _svg(fig, chart_id)


def chart_failures(summary: dict[str, Any]) -> str:
    """Failed calls by reason code."""
    items = [(f"{r['rc']} {r['reason_name'].removeprefix('MQRC_')}", r["count"])
             for r in summary["failures_by_reason"][:10]]
    return _barh(items, "failures", "failed calls", "no call failed")


def chart_applications(summary: dict[str, Any]) -> str:
    """The busiest applications by calls."""
    items = [(r["appl"], r["calls"]) for r in summary["applications"][:10]]
    return _barh(items, "applications", "MQI calls", "no application connected")


CHARTS: dict[str, tuple[str, Callable[[dict[str, Any]], str]]] = {
    "hourly": ("Puts and gets per hour, whole group", chart_hourly),
    "share": ("Work share of each queue manager on shared queues", chart_share),
    "residency": ("Message residency (put to get) per queue", chart_residency),
    "depth": ("Peak depth per hour, busiest queues", chart_depth),
    "failures": ("Failed calls by reason code", chart_failures),
    "applications": ("Busiest applications", chart_applications),
}


def render_report(summary: dict[str, Any]) -> str:
    """The self-contained HTML report of one day."""
    charts = [{"id": cid, "title": title, "svg": fn(summary)} for cid, (title, fn) in CHARTS.items()]
    return _env.get_template("report.html.j2").render(s=summary, charts=charts)


def render_index(days: list[dict[str, Any]]) -> str:
    """The list of days at ``/reports``."""
    return _env.get_template("index.html.j2").render(days=days)
