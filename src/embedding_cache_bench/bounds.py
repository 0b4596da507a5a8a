"""The optimum's bounds beside ``bench --policies``' hit ratios.

For each table (stream, pool): OPT's hits bracketed by ``optimum.foo_bounds``
(counted requests only, after the warm-up, as the policies are counted), the
paper's looser PFOO-L, and the most an online policy can expect on the stream
(``optimum.online_bound`` over ``streams.popularity``: the workloads draw each
request independently). ``with_fractions`` adds to each hit row its hits over
both bounds of its (stream, pool). Needs the ``bounds`` extra; without it the
rows say why and carry no figure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import optimum
from .streams import Stream, popularity


def bound_rows(streams: Sequence[Stream], pools: Sequence[int]) -> list[dict[str, Any]]:
    """One row per (stream, pool): the bounds, as hits and as hit ratios.

    O(streams x pools x the FOO linear program (seconds for 160,000 requests)).
    """
    rows: list[dict[str, Any]] = []
    for stream in streams:
        probabilities, sizes = popularity(stream.spec)
        for pool in pools:
            row: dict[str, Any] = {
                "workload": stream.spec.workload,
                "num_blocks": pool,
                "stream": stream.fingerprint,
            }
            try:
                found = optimum.foo_bounds(stream.keys, stream.sizes, pool, stream.warmup)
            except optimum.BoundsUnavailableError as error:
                rows.append({**row, "unavailable": str(error)})
                continue
            online = optimum.online_bound(probabilities, sizes, pool) * found.requests
            rows.append(
                {
                    **row,
                    **found.as_dict(),
                    "online_expected": online,
                    "online_vs_opt_lower": online / found.foo_lower if found.foo_lower else None,
                }
            )
    return rows


def with_fractions(
    hit_rows: Sequence[dict[str, Any]], bounds: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``hit_rows``, each with its hits over its (stream, pool)'s lower and upper bound
    on OPT and over the online bound (``hits_vs_opt_lower``, ``hits_vs_opt_upper``,
    ``hits_vs_online``) where the bounds were computed. O(rows)."""
    by_pool = {(b["workload"], b["num_blocks"]): b for b in bounds if "foo_lower" in b}
    out = []
    for row in hit_rows:
        found = by_pool.get((row["workload"], row["num_blocks"]))
        if found is not None:
            row = {
                **row,
                "hits_vs_opt_lower": _over(row["hits"], found["foo_lower"]),
                "hits_vs_opt_upper": _over(row["hits"], found["foo_upper"]),
                "hits_vs_online": _over(row["hits"], found["online_expected"]),
            }
        out.append(row)
    return out


def _over(mine: float, bound: float) -> float | None:
    return mine / bound if bound else None
