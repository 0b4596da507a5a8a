"""Run the Hypothesis state machines (tests/test_stateful.py) as a step of the main job.

The state machines live in the test suite, where their settings profiles are
registered (tests/conftest.py: ``ci``, ``dev``, ``thorough``, chosen by the
``HYPOTHESIS_PROFILE`` variable). The step runs pytest on them in a child
process with the profile set and reads the counts from pytest's JUnit XML, so
the figures do not depend on pytest's console format.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The test file the step runs, relative to the project root.
STATEFUL_TESTS = "tests/test_stateful.py"


@dataclass
class PytestRun:
    """The outcome of one pytest run: test counts from its JUnit report."""

    target: str
    hypothesis_profile: str
    passed: int
    failed: int
    errors: int
    skipped: int
    seconds: float
    exit_code: int | None  # None: killed at the timeout
    tail: str  # the last lines of pytest's output (why it failed)

    @property
    def ok(self) -> bool:
        """Every test ran and passed (a run with no passing test is no evidence)."""
        return self.exit_code == 0 and not self.failed and not self.errors and self.passed > 0

    def to_json(self) -> dict[str, Any]:
        """The run as JSON: counts, seconds, verdict."""
        return {
            "target": self.target,
            "hypothesis_profile": self.hypothesis_profile,
            "passed": self.passed,
            "failed": self.failed,
            "errors": self.errors,
            "skipped": self.skipped,
            "ok": self.ok,
            "seconds": round(self.seconds, 1),
            "exit_code": self.exit_code,
            **({} if self.ok else {"tail": self.tail}),
        }


def junit_counts(path: Path) -> dict[str, int]:
    """tests, failures, errors and skipped summed over the JUnit report's test suites.

    A missing or unreadable report counts nothing. O(report size).
    """
    counts = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError):
        return counts
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    for suite in suites:
        for key in counts:
            counts[key] += int(suite.get(key, "0"))
    return counts


def run_pytest(
    target: str,
    root: Path,
    hypothesis_profile: str,
    *,
    timeout: float | None = None,
    extra_args: tuple[str, ...] = (),
) -> PytestRun:
    """Run ``python -m pytest target`` in ``root`` with ``HYPOTHESIS_PROFILE`` set.

    Killed after ``timeout`` seconds (then ``exit_code`` is None). Costs what the
    tests cost under that profile.

    Raises:
        FileNotFoundError: ``root / target`` does not exist (an installed package
            without its test suite cannot run this step).
    """
    if not (root / target).exists():
        raise FileNotFoundError(f"{root / target} does not exist (the step needs the repository)")
    env = {**os.environ, "HYPOTHESIS_PROFILE": hypothesis_profile}
    with tempfile.TemporaryDirectory(prefix="verify-pytest-") as tmp:
        xml = Path(tmp) / "junit.xml"
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        command += [f"--junitxml={xml}", *extra_args, target]
        start = time.monotonic()
        try:
            done = subprocess.run(
                command, cwd=root, env=env, capture_output=True, text=True, timeout=timeout
            )
            exit_code: int | None = done.returncode
            output = done.stdout + done.stderr
        except subprocess.TimeoutExpired as exc:
            exit_code = None
            output = f"killed after {timeout:g} s\n" + _text(exc.stdout) + _text(exc.stderr)
        seconds = time.monotonic() - start
        counts = junit_counts(xml)
    failed, errors, skipped = counts["failures"], counts["errors"], counts["skipped"]
    return PytestRun(
        target=target,
        hypothesis_profile=hypothesis_profile,
        passed=counts["tests"] - failed - errors - skipped,
        failed=failed,
        errors=errors,
        skipped=skipped,
        seconds=seconds,
        exit_code=exit_code,
        tail="\n".join(output.strip().splitlines()[-15:]),
    )


def _text(data: bytes | str | None) -> str:
    if data is None:
        return ""
    return data if isinstance(data, str) else data.decode(errors="replace")
