"""The miss-ratio curve of ``bench --policies``, drawn with matplotlib (the ``[plot]`` extra).

One figure, one panel per workload: miss ratio (1 - request hit ratio)
against pool size (log scale), one line per policy and a dashed one for the
offline reference (the optimum misses no more than it does: see ``offline``);
written as PNG and SVG.
matplotlib is imported only here, and only when a plot is asked for.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

#: What the command prints (one line) when matplotlib is missing.
INSTALL_HINT = (
    "matplotlib is not installed, so no plot was drawn: pip install 'embedding-cache[plot]'"
)
#: File name (without extension) of the curve, and the formats written.
STEM = "miss_ratio_curve"
FORMATS = ("png", "svg")
#: The offline reference's line (``offline``): drawn dashed, in black, after the policies.
OFFLINE_LABEL = "offline reference"


class PlotUnavailableError(RuntimeError):
    """matplotlib cannot be imported; the message is ``INSTALL_HINT``."""


def _pyplot() -> ModuleType:
    """``matplotlib.pyplot`` on the file-only Agg backend.

    Raises:
        PlotUnavailableError: matplotlib is not installed.
    """
    try:
        matplotlib = importlib.import_module("matplotlib")
        matplotlib.use("Agg")
        return importlib.import_module("matplotlib.pyplot")
    except ImportError as exc:
        raise PlotUnavailableError(INSTALL_HINT) from exc


def curves(result: Mapping[str, Any]) -> dict[str, dict[str, list[tuple[int, float]]]]:
    """workload -> policy -> [(pool size, miss ratio)], by pool size, from the bench result."""
    out: dict[str, dict[str, list[tuple[int, float]]]] = {}
    for row in result["hit_ratios"]:
        line = out.setdefault(row["workload"], {}).setdefault(row["policy"], [])
        line.append((row["num_blocks"], row["miss_ratio"]))
    for row in result.get("reference", []):
        line = out.setdefault(row["workload"], {}).setdefault(OFFLINE_LABEL, [])
        line.append((row["num_blocks"], row["miss_ratio"]))
    for lines in out.values():
        for points in lines.values():
            points.sort()
    return out


def write_miss_ratio_curve(result: Mapping[str, Any], directory: Path) -> list[Path]:
    """Draw the curve into ``directory`` (created if missing); the files written.

    Raises:
        PlotUnavailableError: matplotlib is not installed (nothing is written).
    """
    plt = _pyplot()
    data = curves(result)
    figure, axes = plt.subplots(
        1, len(data), figsize=(5.5 * len(data), 4.2), squeeze=False, sharey=True
    )
    workloads = result.get("workloads", {})
    for axis, (name, lines) in zip(axes[0], data.items(), strict=True):
        for policy, points in lines.items():
            pools = [pool for pool, _ in points]
            misses = [miss for _, miss in points]
            if policy == OFFLINE_LABEL:
                axis.plot(pools, misses, "k--", marker="x", markersize=4, label=policy)
            else:
                axis.plot(pools, misses, marker="o", markersize=3, label=policy)
        axis.set_xscale("log", base=2)
        axis.set_xlabel("pool size (blocks)")
        info = workloads.get(name, {})
        share = info.get("one_time_fraction", 0.0)
        subtitle = f", {share:.0%} one-time" if share else ""
        axis.set_title(f"{name}: Zipf {info.get('zipf_exponent', '?')}{subtitle}")
        axis.grid(True, which="both", alpha=0.3)
        axis.legend()
    axes[0][0].set_ylabel("miss ratio (1 - request hit ratio)")
    axes[0][0].set_ylim(bottom=0)
    figure.suptitle(f"embedding-cache bench --policies (seed {result.get('seed', 0)})")
    figure.tight_layout()
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / f"{STEM}.{fmt}" for fmt in FORMATS]
    try:
        for path in paths:
            figure.savefig(path, dpi=120)
    finally:
        plt.close(figure)
    return paths
