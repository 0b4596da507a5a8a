"""A copy of the tla/ directory in which one model's config assigns other constants.

The nightly profile dumps the depth-bounded replay models with a deeper
``ReplayDepth`` than their configs set. The graph dump (``graph_dump``) reads a
model's config, its manifest entry and its modules from one directory, so the
override is a temporary copy of that directory (text files only) with one
config rewritten: the dump, the manifest lookup and TLC all see the same files,
and the source tree is never touched.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from .graph_dump import model_files

#: One constant assignment of a TLC config (``Name = value``; an override ``<-`` is not one).
_ASSIGNMENT = re.compile(r"^(?P<indent>\s*)(?P<name>\w+)\s*=\s*(?P<value>.+?)\s*$")


def assign_constants(text: str, values: Mapping[str, str]) -> str:
    """The config ``text`` with each constant of ``values`` assigned its new TLA+ text.

    Only constants the config already assigns can be changed. O(len(text)).

    Raises:
        ValueError: a constant of ``values`` is not assigned in ``text``.
    """
    out: list[str] = []
    seen: set[str] = set()
    for line in text.splitlines():
        match = _ASSIGNMENT.match(line)
        if match is not None and match.group("name") in values:
            name = match.group("name")
            line = f"{match.group('indent')}{name} = {values[name]}"
            seen.add(name)
        out.append(line)
    missing = sorted(set(values) - seen)
    if missing:
        raise ValueError(f"the config assigns no constant {missing}")
    return "\n".join(out) + "\n"


@contextmanager
def overridden_tla_dir(tla_dir: Path, model: str, values: Mapping[str, str]) -> Iterator[Path]:
    """A temporary copy of ``tla_dir`` whose config of ``model`` (its manifest entry's
    ``config``: ``graph_dump.model_files``) assigns ``values``; removed on exit.
    O(size of tla_dir).

    Raises:
        ValueError: the model's config does not assign one of ``values``.
    """
    config_file = model_files(tla_dir, model)[1]
    text = assign_constants((tla_dir / config_file).read_text(encoding="utf-8"), values)
    with tempfile.TemporaryDirectory(prefix=f"tla-{model}-") as tmp:
        copy = Path(tmp) / "tla"
        shutil.copytree(tla_dir, copy, ignore=shutil.ignore_patterns("states", "*.dot"))
        (copy / config_file).write_text(text, encoding="utf-8")
        yield copy
