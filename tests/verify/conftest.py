"""Fixtures of the conformance-link tests: the tla/ directory, skipping when TLC cannot run."""

from __future__ import annotations

from pathlib import Path

import pytest

from embedding_cache_checker.tlc.jar import TlcSetupError, locate_jar, locate_java
from embedding_cache_checker.tlc.manifest import find_tla_dir


@pytest.fixture(scope="session")
def tla_dir() -> Path:
    """The project's tla/ directory; skips the test when java or TLC's jar is missing."""
    try:
        locate_java()
        locate_jar()
    except TlcSetupError as exc:
        pytest.skip(f"TLC cannot run: {exc}")
    return find_tla_dir()
