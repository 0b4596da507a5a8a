"""Argument values of the kinds callers pass that are not plain ints and tuples.

The misuse matrix (spec/MISUSE.md section 1 names them) and the unit tests of
``alloc``'s shape both use them. Each repr is its constructor call: test ids show
it, and pytest-xdist's workers must collect the same ids (object.__repr__ shows an
address, which differs between processes).
"""

from __future__ import annotations


class Size(tuple[int, ...]):
    """A subclass of tuple (like ``torch.Size``): a well-formed shape."""

    __slots__ = ()


class Index:
    """Not an int, but has ``__index__`` (like a numpy integer): a well-formed count."""

    __slots__ = ("value",)

    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value

    def __repr__(self) -> str:
        return f"Index({self.value})"
