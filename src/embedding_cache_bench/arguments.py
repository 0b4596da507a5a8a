"""Argument parsers shared by the bench's options (``command``, ``connector_report``)."""

from __future__ import annotations

import argparse


def int_at_least(text: str, minimum: int, expected: str) -> int:
    """``text`` as an int >= ``minimum``, else argparse's error naming ``expected``. O(len)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an int, not {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"expected {expected}, not {value}")
    return value
