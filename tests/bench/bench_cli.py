"""What the bench tests share: ``embedding-cache`` with only ``bench`` registered, and
the seed's public calls (which the op mixes must all exercise)."""

from __future__ import annotations

import argparse

from embedding_cache_bench import command

#: The seed class's public methods: an op mix that calls each one exercises the whole API.
SEED_CALLS = frozenset(
    {"get", "alloc", "mark_ready", "discard", "pin", "unpin", "pin_if_ready", "has_held_entries"}
)


def main(argv: list[str]) -> int:
    """``embedding-cache`` with only ``bench`` registered (other subcommands may be
    mid-edit); the exit code."""
    parser = argparse.ArgumentParser(prog="embedding-cache")
    command.add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    code: int = args.func(args)
    return code
