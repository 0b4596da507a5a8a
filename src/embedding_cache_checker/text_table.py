"""The project's one table renderer: plain-text tables for people.

Every human-readable table the package prints (``tlc`` results and
counterexamples, ``verify`` and its ``--compare``, ``tlc --repro``, every
``bench`` section) goes through ``render_table``, so they all look alike
and a change of layout is made once. Standard library only: the bench and
the verifier share it without importing each other.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence


def render_table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], right: Collection[int]
) -> str:
    """A header line, a rule of dashes and one line per row, columns two spaces apart.

    Columns whose index is in ``right`` are right-aligned (headers too), the
    others left-aligned; trailing blanks are cut. O(cells).

    Raises:
        ValueError: a row has a different number of cells than ``headers``.
    """
    for row in rows:
        if len(row) != len(headers):
            raise ValueError(f"render_table: a row has {len(row)} cells, headers {len(headers)}")
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]

    def fmt(cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([fmt(headers), rule, *(fmt(r) for r in rows)])


def numeric_right(width: int) -> range:
    """The ``right`` set of a table whose first column names and the rest are numbers."""
    return range(1, width)
