"""The mutation score of the last ``mutation/run.sh``, and whether every survivor is explained.

    python mutation/score.py                 # table per module, score, survivors check
    python mutation/score.py --json          # the same as one JSON object
    python mutation/score.py --min 95        # exit 1 below 95% (the default)

mutmut 3 keeps each mutated file's results in ``mutants/<path>.meta`` (JSON:
``exit_code_by_key``, mutant name -> the test run's exit code). A mutant is
*killed* when a test failed (exit 1, or 3 for an error in the test run), a
*timeout* when it ran out of its CPU budget (SIGXCPU, -24: an endless-loop
mutant; detected, as mutation tools count timeouts), *survived* when every
test passed (0), *no tests* when no selected test reaches it (33 or 5), and
*not checked* when the run never got to it (no exit code).

The score is detected / all mutants, detected = killed + timeout; survivors
and no-tests count against it. Every survivor and no-tests mutant must be
named (in backticks) in ``mutation/SURVIVORS.md`` with why it is equivalent
or which test now kills it; a listed name that no longer survives is stale.

Exit 1 when the score is below ``--min``, a mutant was not checked, a
survivor is not listed, or a listed name is stale; 2 when there are no
results (run ``bash mutation/run.sh`` first).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from embedding_cache_checker.text_table import numeric_right, render_table  # noqa: E402

#: mutmut 3's exit codes (mutmut/__main__.py, ``exit_code_to_status``), by what they mean here.
KILLED_CODES = frozenset({1, 3})
TIMEOUT_CODES = frozenset({-24, 24, 36, 152, 255})
SURVIVED_CODES = frozenset({0})
NO_TESTS_CODES = frozenset({5, 33})
KINDS = ("killed", "timeout", "survived", "no tests", "not checked", "other")
#: A mutant's name in SURVIVORS.md: `embedding_cache.<module>.<function>__mutmut_<n>`.
NAME = re.compile(r"`(embedding_cache\.[^`\s]+__mutmut_\d+)`")


def kind_of(code: int | None) -> str:
    """What a mutmut exit code says of a mutant (one of ``KINDS``)."""
    if code is None:
        return "not checked"
    for kind, codes in (
        ("killed", KILLED_CODES),
        ("timeout", TIMEOUT_CODES),
        ("survived", SURVIVED_CODES),
        ("no tests", NO_TESTS_CODES),
    ):
        if code in codes:
            return kind
    return "other"


def read_results(mutants: Path) -> dict[str, dict[str, str]]:
    """Module path (relative to src/) -> mutant name -> kind, from every ``.meta`` file."""
    results: dict[str, dict[str, str]] = {}
    for meta in sorted(mutants.glob("src/**/*.meta")):
        module = str(meta.relative_to(mutants / "src")).removesuffix(".meta")
        codes = json.loads(meta.read_text())["exit_code_by_key"]
        results[module] = {name: kind_of(code) for name, code in codes.items()}
    return results


def listed_names(survivors_file: Path) -> set[str]:
    """The mutant names SURVIVORS.md explains."""
    if not survivors_file.exists():
        return set()
    return set(NAME.findall(survivors_file.read_text()))


def score(results: dict[str, dict[str, str]], listed: set[str], minimum: float) -> dict[str, Any]:
    """Counts per module and in all, the score, and what the survivors file misses."""
    per_module = {module: Counter(kinds.values()) for module, kinds in results.items()}
    total: Counter[str] = Counter()
    for counts in per_module.values():
        total.update(counts)
    mutants = sum(total.values())
    detected = total["killed"] + total["timeout"]
    undetected = {
        name
        for kinds in results.values()
        for name, kind in kinds.items()
        if kind in ("survived", "no tests", "other")
    }
    pct = 100.0 * detected / mutants if mutants else 0.0
    report = {
        "mutants": mutants,
        **{kind: total[kind] for kind in KINDS},
        "score_percent": round(pct, 2),
        "killed_by_a_test_percent": round(100.0 * total["killed"] / mutants, 2) if mutants else 0.0,
        "minimum_percent": minimum,
        "per_module": {m: {k: c[k] for k in KINDS if c[k]} for m, c in per_module.items()},
        "unlisted_survivors": sorted(undetected - listed),
        "stale_listed": sorted(listed - undetected),
    }
    report["ok"] = bool(
        mutants
        and pct >= minimum
        and not total["not checked"]
        and not report["unlisted_survivors"]
        and not report["stale_listed"]
    )
    return report


def render(report: dict[str, Any]) -> str:
    """The report as a table per module and a verdict."""
    headers = ["module", "mutants", *KINDS[:4], "score"]
    rows = []
    for module, counts in report["per_module"].items():
        n = sum(counts.values())
        done = counts.get("killed", 0) + counts.get("timeout", 0)
        rows.append(
            [module, str(n), *(str(counts.get(k, 0)) for k in KINDS[:4]), f"{100 * done / n:.1f}%"]
        )
    rows.append(
        [
            "all",
            str(report["mutants"]),
            *(str(report[k]) for k in KINDS[:4]),
            f"{report['score_percent']:.1f}%",
        ]
    )
    lines = [render_table(headers, rows, numeric_right(len(headers))), ""]
    lines.append(
        f"score {report['score_percent']:.2f}% (killed + timeout over all mutants; "
        f"killed by a failing test alone {report['killed_by_a_test_percent']:.2f}%), "
        f"minimum {report['minimum_percent']:g}%"
    )
    if report["not checked"]:
        lines.append(f"{report['not checked']} mutants not checked: the run did not finish")
    for name in report["unlisted_survivors"]:
        lines.append(f"survivor not in mutation/SURVIVORS.md: {name}")
    for name in report["stale_listed"]:
        lines.append(f"listed in mutation/SURVIVORS.md but no longer a survivor: {name}")
    lines.append("ok" if report["ok"] else "NOT OK")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Print the score; exit 0 (ok), 1 (below minimum or unexplained survivors), 2 (no results)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutants", type=Path, default=ROOT / "mutants")
    parser.add_argument("--survivors", type=Path, default=ROOT / "mutation" / "SURVIVORS.md")
    parser.add_argument("--min", type=float, default=95.0, dest="minimum")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    results = read_results(args.mutants)
    if not results:
        print(f"no mutmut results under {args.mutants}: run bash mutation/run.sh first")
        return 2
    report = score(results, listed_names(args.survivors), args.minimum)
    print(json.dumps(report, indent=1) if args.json else render(report))
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
