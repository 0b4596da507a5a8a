"""Combine the builds' measurements into one report, and print it as a table or JSON.

The report is one JSON-ready dict (``REPORT_KEYS`` at the top level,
``RESULT_KEYS`` in each row of ``results``); ``render`` turns it into the
human table. Ratios between builds compare medians taken in different
processes; ratios between pool sizes of one build are medians of per-repeat
ratios, the sizes having been timed interleaved in the same process.

``scaling[build]`` compares the largest pool with the smallest: ``ns_per_op_ratio``
(the measured mixes), ``same_mix_ratio`` (both sizes' per-call costs weighted by
the smallest pool's operation counts: the same work at both sizes) and ``by_op``
(per operation). ``checked_over_default[size]`` is the checked build's ns/op over
the default build's.

``render_policies`` prints ``bench --policies`` and ``render_beyond_seed``
``bench --beyond-seed`` (one table per section), through the same ``_table``
(``text_table.render_table``, the project's one renderer).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from embedding_cache_checker.text_table import numeric_right, render_table

from . import contiguity, rounds

#: Top-level keys of the JSON report.
REPORT_KEYS = (
    "command",
    "seed",
    "repeat",
    "sizes",
    "builds",
    "ops",
    "results",
    "checked_over_default",
    "scaling",
    "notes",
)
#: Keys of each row of ``results`` (one per build and pool size).
RESULT_KEYS = (
    "build",
    "num_blocks",
    "catalogue",
    "item_sizes",
    "warmup_ops",
    "ops",
    "ns_per_op",
    "ns_per_op_runs",
    "ns_per_call_by_op",
    "op_counts",
    "lookups",
    "hits",
    "hit_ratio",
    "allocs",
    "evictions",
    "alloc_failures",
)
#: Operation columns of the per-operation table, in the order the table prints them.
OPERATIONS = ("get", "alloc", "mark_ready", "discard", "pin", "unpin", "pin_if_ready")


def _scaling(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per-op time at the largest pool over that at the smallest, for one build's rows."""
    small = min(rows, key=lambda row: row["num_blocks"])
    large = max(rows, key=lambda row: row["num_blocks"])
    small_ops, large_ops = small["ns_per_call_by_op"], large["ns_per_call_by_op"]
    by_op = {
        name: large_ops[name] / small_ops[name]
        for name in OPERATIONS
        if small_ops.get(name) and name in large_ops
    }
    # The mix shifts with the pool (bigger pools hit more, so allocate less), which
    # moves the plain ratio; re-weighting both sizes' per-call costs by the smallest
    # pool's operation counts compares the same work at both sizes.
    same_mix = rounds.same_mix_ratio(small["op_counts"], small_ops, large_ops)
    return {
        "smallest": small["num_blocks"],
        "largest": large["num_blocks"],
        "ns_per_op_ratio": rounds.median_ratio(large["ns_per_op_runs"], small["ns_per_op_runs"]),
        "same_mix_ratio": same_mix,
        "by_op": by_op,
    }


def build_report(
    runs: Mapping[str, Mapping[str, Any]],
    *,
    sizes: Sequence[int],
    ops: Mapping[str, int],
    repeat: int,
    seed: int,
    notes: Sequence[str] = (),
) -> dict[str, Any]:
    """One report from each build's ``runner.measure`` output (keyed by build name)."""
    results = [
        {"build": build, **{key: row[key] for key in RESULT_KEYS if key != "build"}}
        for build, run in runs.items()
        for row in run["results"]
    ]
    by_build: dict[str, dict[int, dict[str, Any]]] = {}
    for row in results:
        by_build.setdefault(row["build"], {})[row["num_blocks"]] = row
    checked_over_default: dict[str, float] = {}
    if "default" in by_build and "checked" in by_build:
        for size in sizes:
            base = by_build["default"][size]["ns_per_op"]
            if base:
                checked_over_default[str(size)] = by_build["checked"][size]["ns_per_op"] / base
    return {
        "command": "embedding-cache bench",
        "seed": seed,
        "repeat": repeat,
        "sizes": list(sizes),
        "builds": list(runs),
        "ops": dict(ops),
        "results": results,
        "checked_over_default": checked_over_default,
        "scaling": {build: _scaling(list(rows.values())) for build, rows in by_build.items()},
        "notes": list(notes),
    }


def _margin(by: float) -> str:
    """How far a target was missed: two decimals, or one significant digit when that
    would print 0.00 (a miss must never read as no miss)."""
    return f"{by:.2f}" if abs(by) >= 0.005 else f"{by:.1g}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A bench table's lines: first column left-aligned, the numbers right-aligned."""
    return render_table(header, rows, numeric_right(len(header))).splitlines()


def render(report: Mapping[str, Any]) -> str:
    """The report as the human-readable tables and summary lines."""
    ratios = report["checked_over_default"]
    rows = []
    for row in report["results"]:
        ratio = ratios.get(str(row["num_blocks"])) if row["build"] == "checked" else None
        rows.append(
            [
                row["build"],
                f"{row['num_blocks']:,}",
                f"{row['catalogue']:,}",
                f"{row['warmup_ops']:,}",
                f"{row['ops']:,}",
                f"{row['ns_per_op']:,.0f}",
                "-" if ratio is None else f"{ratio:.1f}x",
                f"{row['hit_ratio']:.1%}",
                f"{row['evictions']:,}",
                f"{row['alloc_failures']:,}",
            ]
        )
    header = ["build", "blocks", "items", "warm-up", "ops", "ns/op", "vs default"]
    header += ["hit ratio", "evictions", "alloc fails"]
    lines = [
        f"embedding-cache bench: seed {report['seed']}, median of {report['repeat']} run(s); "
        "ops, hit ratio, evictions and alloc failures count the measured window after warm-up",
        "",
        *_table(header, rows),
        "",
        "ns per call by operation (each call timed alone, timer cost subtracted):",
    ]
    op_rows = [
        [row["build"], f"{row['num_blocks']:,}"]
        + [f"{row['ns_per_call_by_op'].get(name, 0.0):,.0f}" for name in OPERATIONS]
        for row in report["results"]
    ]
    lines += _table(["build", "blocks", *OPERATIONS], op_rows)
    lines.append("")
    for build, scaling in report["scaling"].items():
        if scaling["smallest"] == scaling["largest"]:
            continue
        by_op = ", ".join(f"{name} {ratio:.2f}x" for name, ratio in scaling["by_op"].items())
        lines.append(
            f"{build} build: per-op time at {scaling['largest']:,} blocks / at "
            f"{scaling['smallest']:,} blocks = {scaling['ns_per_op_ratio']:.2f}x; "
            f"same mix: {scaling['same_mix_ratio']:.2f}x (by operation: {by_op})"
        )
    lines += [f"note: {note}" for note in report["notes"]]
    return "\n".join(lines)


#: Top-level keys of the ``bench --policies`` JSON report; its "policies" section is
#: ``policies.measure``'s dict.
POLICY_REPORT_KEYS = ("command", "build", "policies", "plot", "notes")


def _times(ratio: float | None) -> str:
    return "-" if ratio is None else f"{ratio:.2f}x"


def _policy_hit_table(
    section: Mapping[str, Any], references: Mapping[tuple[str, int], Mapping[str, Any]]
) -> list[str]:
    """The hit-ratio table at the table pools: each policy's rows, then the offline
    reference's (when simulated) after the last policy of each (workload, pool)."""
    names, base = section["names"], section["baseline"]
    table_pools = set(section["pools"])
    lines: list[str] = []
    hit_rows: list[list[str]] = []
    for row in section["hit_ratios"]:
        if row["num_blocks"] not in table_pools:
            continue
        hit_rows.append(
            [
                row["workload"],
                f"{row['num_blocks']:,}",
                row["policy"],
                f"{row['request_hit_ratio']:.1%}",
                _times(row.get("request_hit_vs_fifo")),
                f"{row['block_hit_ratio']:.1%}",
                _times(row.get("block_hit_vs_fifo")),
                _times(row.get("request_hit_vs_reference")),
                _percent(row.get("hits_vs_opt_lower")),
                _percent(row.get("hits_vs_opt_upper")),
                f"{row['evictions']:,}",
                f"{row['alloc_failures']:,}",
            ]
        )
        reference = references.get((row["workload"], row["num_blocks"]))
        if reference is not None and row["policy"] == names[-1]:
            chosen = reference["by_rule"][reference["rule"]]
            hit_rows.append(
                [
                    row["workload"],
                    f"{row['num_blocks']:,}",
                    f"offline ({reference['rule']})",
                    f"{reference['request_hit_ratio']:.1%}",
                    "-",
                    f"{reference['block_hit_ratio']:.1%}",
                    "-",
                    "1.00x",
                    "-",
                    "-",
                    f"{chosen['evictions']:,}",
                    f"{chosen['bypasses']:,}",
                ]
            )
    header = [
        "workload",
        "blocks",
        "policy",
        "request hit",
        f"vs {base}",
        "block hit",
        f"vs {base}",
        "vs offline",
        "of OPT lower",
        "of OPT upper",
    ]
    lines += _table([*header, "evictions", "alloc fails"], hit_rows)
    if references:
        lines.append(
            "offline: the better of two policies that know the future (belady: farthest next "
            "request; belady-size: largest size x distance to it; both bypass what is never "
            "requested again), a heuristic; its alloc fails are bypasses"
        )
    lines += _bounds_table(section.get("bounds", []))
    return lines


def _percent(ratio: float | None) -> str:
    return "-" if ratio is None else f"{ratio:.1%}"


def _bounds_table(bounds: Sequence[Mapping[str, Any]]) -> list[str]:
    """The optimum's bounds per (workload, pool): OPT's hits lie between the two FOO
    columns; the online column caps any policy that cannot see the future."""
    if not bounds:
        return []
    rows = []
    for row in bounds:
        if "foo_lower" not in row:
            rows.append([row["workload"], f"{row['num_blocks']:,}", row["unavailable"]])
            continue
        rows.append(
            [
                row["workload"],
                f"{row['num_blocks']:,}",
                f"{row['foo_lower']:,}",
                f"{row['foo_upper']:,.0f}",
                f"{row['gap']:.2%}",
                f"{row['resource_upper']:,}",
                f"{row['online_expected']:,.0f}",
                _percent(row["online_vs_opt_lower"]),
                f"{row['seconds']:.1f}",
            ]
        )
    header = [
        "workload",
        "blocks",
        "OPT lower",
        "OPT upper",
        "gap",
        "PFOO-L",
        "online cap",
        "cap / OPT lower",
        "s",
    ]
    return [
        "",
        "bounds on the optimum's hits over the counted requests (optimum.foo_bounds: the FOO "
        "relaxation solved by HiGHS, and a schedule from it; PFOO-L: the paper's resource "
        "bound; online cap: the most hits any policy that cannot see the future can expect, "
        "the requests being drawn independently):",
        *_table(header, rows),
    ]


def _policy_curve_table(
    section: Mapping[str, Any], references: Mapping[tuple[str, int], Mapping[str, Any]]
) -> list[str]:
    """The miss-ratio curve as a table: a column per (workload, policy), then one per
    workload for the offline reference (when simulated)."""
    names = section["names"]
    lines: list[str] = []
    lines += ["", "miss ratio (1 - request hit ratio) by pool size:"]
    workloads = list(section["workloads"])
    miss = {
        (row["workload"], row["policy"], row["num_blocks"]): row["miss_ratio"]
        for row in section["hit_ratios"]
    }
    offline_miss = {key: row["miss_ratio"] for key, row in references.items()}
    columns = [(name, policy) for name in workloads for policy in names]
    curve_rows = [
        [f"{pool:,}"]
        + [f"{miss[(name, policy, pool)]:.1%}" for name, policy in columns]
        + [
            f"{offline_miss[(name, pool)]:.1%}" if (name, pool) in offline_miss else "-"
            for name in workloads
            if offline_miss
        ]
        for pool in section["curve_pools"]
    ]
    curve_header = [f"{name} {policy}" for name, policy in columns]
    curve_header += [f"{name} offline" for name in workloads if offline_miss]
    lines += _table(["blocks", *curve_header], curve_rows)
    return lines


def render_policies(report: Mapping[str, Any]) -> str:
    """The ``bench --policies`` report as tables: hit ratios, miss-ratio curve, costs, targets."""
    section = report["policies"]
    base = section["baseline"]
    first = next(iter(section["workloads"].values()))
    lines = [
        f"embedding-cache bench --policies: {report['build']} build, seed {section['seed']}; "
        f"hit ratios over {first['requests']:,} requests after {first['warmup']:,} warm-up "
        f"requests, every policy on the same stream; vs {base} = ratio to {base}'s",
        "",
    ]
    references = {(row["workload"], row["num_blocks"]): row for row in section.get("reference", [])}
    lines += _policy_hit_table(section, references)
    lines += _policy_curve_table(section, references)
    cost = section["cost"]
    lines += [
        "",
        f"per-op cost (this thread's CPU time): median of {section['repeat']} round(s), "
        "the policies alternating; "
        f"streams: {cost['requests']:,} requests timed after {cost['warmup']:,} warm-up; "
        f"mix: the small-entry realistic mix, {cost['mix_ops']:,} ops; ns by operation: "
        "each call timed alone, timer cost subtracted",
    ]
    cost_rows = [
        [
            row["workload"],
            f"{row['num_blocks']:,}",
            row["policy"],
            f"{row['calls']:,}",
            f"{row['ns_per_op']:,.0f}",
            _times(row.get("ns_per_op_ratio")),
            _times(row.get("same_mix_ratio")),
        ]
        + [
            f"{row['ns_per_call_by_op'][name]:,.0f}" if name in row["ns_per_call_by_op"] else "-"
            for name in OPERATIONS
        ]
        for row in section["costs"]
    ]
    header = ["workload", "blocks", "policy", "calls", "ns/op", f"vs {base}", "same mix"]
    lines += _table([*header, *OPERATIONS], cost_rows)
    if section["targets"]:
        lines.append("")
    for check in section["targets"]:
        verdict = "met" if check["met"] else f"MISSED by {_margin(-check['margin'])}x"
        lines.append(
            f"target: {check['check']}: {check['policy']} {check['value']:.2f}x "
            f"({check['target']}): {verdict}"
        )
    plot = report["plot"]
    lines.append("")
    if plot["files"]:
        lines.append(f"miss-ratio curve: {', '.join(plot['files'])}")
    elif plot["skipped"]:
        lines.append(f"miss-ratio curve: {plot['skipped']}")
    lines += [f"note: {note}" for note in report["notes"]]
    return "\n".join(lines)


#: Top-level keys of the ``bench --beyond-seed`` JSON report, besides one key per
#: section run (``beyond.SECTIONS``: each that section module's ``measure`` dict).
BEYOND_REPORT_KEYS = ("command", "build", "sections", "options", "seconds", "targets", "notes")


def _vs(ratio: float | None) -> str:
    return "-" if ratio is None else f"{ratio:.2f}x"


def _beyond_construction(section: Mapping[str, Any]) -> list[str]:
    rows = [
        [row["impl"], f"{row['seconds'] * 1e3:,.1f}", _vs(row["vs_seed"])]
        for row in section["rows"]
    ]
    return [
        f"construction: EmbeddingCache({section['num_blocks']:,}), median of "
        f"{section['repeat']} round(s), this thread's CPU time; vs seed: median of the "
        "per-round ratios",
        *_table(["impl", "ms", "vs seed"], rows),
    ]


def _beyond_memory(section: Mapping[str, Any]) -> list[str]:
    rows = [
        [
            row["impl"],
            f"{row['pool_bytes_per_block']:.1f}",
            _vs(row["pool_vs_seed"]),
            f"{row['entry_bytes']:,.0f}",
            _vs(row["entry_vs_seed"]),
            f"{row['full_bytes_per_block']:.1f}",
            _vs(row["full_vs_seed"]),
        ]
        for row in section["rows"]
    ]
    return [
        f"memory (tracemalloc): empty pool of {section['pool_blocks']:,} blocks, per block; "
        f"{section['entries']:,} ready entries of {section['entry_blocks']} blocks "
        f"(pool {section['fill_pool_blocks']:,}), per entry; a pool of "
        f"{section['full_pool_blocks']:,} blocks filled with such entries, per block",
        *_table(
            ["impl", "pool B/block", "vs seed", "B/entry", "vs seed", "full B/block", "vs seed"],
            rows,
        ),
    ]


def _beyond_contiguity(section: Mapping[str, Any]) -> list[str]:
    shared, token = section["shared"], section["token"]
    rows = [
        [
            row["workload"],
            f"{row['num_blocks']:,}",
            row["impl"],
            f"{row['multi_block_allocs']:,}",
            f"{row['runs_per_entry']:.2f}",
            _vs(row["vs_seed"]),
            f"{row['one_run_fraction']:.1%}",
            f"{row['max_runs']:,}",
            {True: "yes", False: "no"}.get(row.get("same_stream_as_seed"), "-"),
        ]
        for row in section["rows"]
    ]
    header = ["workload", "blocks", "impl", "multi-block allocs", "runs/entry", "vs seed"]
    return [
        "contiguity: runs of consecutive block ids per multi-block entry; shared = compare.py's "
        f"op mix ({shared['ops']:,} ops, sizes 1-32, {shared['catalogue']:,} keys, seed "
        f"{shared['seed']}, every alloc); reuse/scan = the token-sized streams "
        f"({token['item_blocks'][0]:,}-{token['item_blocks'][1]:,} blocks, allocs of "
        f"{token['requests']:,} requests after {token['warmup']:,} warm-up)",
        *_table([*header, "one run", "max runs", "seed's stream"], rows),
        *contiguity.tradeoff_lines(section),
    ]


def _beyond_speed(section: Mapping[str, Any]) -> list[str]:
    rows = [
        [r["impl"], f"{r['ns_per_op']:,.0f}", _vs(r["vs_seed"]), f"{r.get('refused_calls', 0):,}"]
        for r in section["rows"]
    ]
    return [
        f"speed: compare.py's op mix recorded on the seed ({section['calls']:,} calls, "
        f"{section['num_blocks']:,} blocks), replayed alternating, median of {section['repeat']} "
        "round(s), this thread's CPU time; vs seed: median of per-round ratios; refused: "
        "calls a configuration that evicts otherwise finds illegal (timed, as compare.py does)",
        *_table(["impl", "ns/op", "vs seed", "refused"], rows),
    ]


def _beyond_scale(section: Mapping[str, Any]) -> list[str]:
    rows = []
    for row in section["rows"]:
        ratios = row["by_op_vs_smallest"]
        worst = max(ratios, key=lambda op: ratios[op]) if ratios else None
        rows.append(
            [
                row["impl"],
                f"{row['num_blocks']:,}",
                f"{row['catalogue']:,}",
                f"{row['ns_per_op']:,.0f}",
                _vs(row["vs_smallest"]),
                _vs(row["same_mix_vs_smallest"]),
                "-" if worst is None else f"{worst} {ratios[worst]:.2f}x",
                _vs(row["vs_seed"]),
                _vs(row["growth_over_seeds"]),
                f"{row['hit_ratio']:.1%}",
                f"{row['evictions']:,}",
            ]
        )
    header = ["impl", "blocks", "items", "ns/op", "vs smallest", "same mix", "worst op"]
    return [
        "scale: the realistic mix at each pool size (items 1-32 blocks, a catalogue of ~4 "
        f"pools' worth), warmed up once, then {section['repeat']} window(s) of "
        f"{section['ops']:,} calls per size, sizes alternating, this thread's CPU time; "
        "vs smallest: median of the per-window ratios; worst op: the operation whose "
        "per-call cost grew most; vs seed: ns/op over the seed's at that size; over seed's: "
        "vs smallest over the seed's (whose operations do not depend on the pool: its growth "
        "is the memory hierarchy's)",
        *_table([*header, "vs seed", "over seed's", "hit ratio", "evictions"], rows),
    ]


_BEYOND_RENDERERS = {
    "construction": _beyond_construction,
    "memory": _beyond_memory,
    "contiguity": _beyond_contiguity,
    "speed": _beyond_speed,
    "scale": _beyond_scale,
}


def render_beyond_seed(report: Mapping[str, Any]) -> str:
    """The ``bench --beyond-seed`` report: one table per section run, then the targets."""
    lines = [
        f"embedding-cache bench --beyond-seed: {report['build']} build beside the seed's class, "
        "measured side by side in this process",
    ]
    for name in report["sections"]:
        lines += ["", *_BEYOND_RENDERERS[name](report[name])]
    if report["targets"]:
        lines.append("")
    for check in report["targets"]:
        unit = check["unit"]
        verdict = "met" if check["met"] else f"MISSED by {_margin(-check['margin'])}{unit}"
        lines.append(
            f"target: {check['check']}: {check['policy']} {check['value']:.2f}{unit} "
            f"({check['target']}): {verdict}"
        )
    lines += [f"note: {note}" for note in report["notes"]]
    return "\n".join(lines)
