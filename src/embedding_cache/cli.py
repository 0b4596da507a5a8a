"""The ``embedding-cache`` command: one subcommand per job (bench, tlc, verify, ...)."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

#: Modules that each register one subcommand with ``add_parser(subparsers)``.
SUBCOMMAND_MODULES = (
    "embedding_cache.bench.command",
    "embedding_cache.tlc.command",
    "embedding_cache.verify.command",
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
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
