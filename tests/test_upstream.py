"""The seed is vLLM's own class, loaded from the installed vllm==0.33.0 (``upstream``).

The loader takes one file of the distribution, and nothing else of vLLM; it
refuses any other release and a missing one with the install command, and so
do the tests and the bench that need it (they fail; they never skip).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest

from embedding_cache_checker import cli, upstream

#: What every refusal must tell the user to run.
INSTALL = ("pip install -e '.[vllm]'", f"pip install --no-deps vllm=={upstream.VLLM_VERSION}")


def fake_vllm(root: Path, version: str, with_file: bool = True) -> metadata.Distribution:
    """A vllm distribution of ``version`` installed under ``root`` (its metadata, and
    ``UPSTREAM_FILE`` holding a stand-in class unless ``with_file`` is False)."""
    info = root / f"vllm-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: vllm\nVersion: {version}\n")
    if with_file:
        source = root / upstream.UPSTREAM_FILE
        source.parent.mkdir(parents=True)
        source.write_text("import threading\n\nclass EmbeddingCache:\n    planted = True\n")
    return metadata.PathDistribution(info)


def missing(name: str) -> metadata.Distribution:
    """``importlib.metadata.distribution`` when nothing of that name is installed."""
    raise metadata.PackageNotFoundError(name)


def test_the_installed_release_is_the_pinned_one() -> None:
    assert metadata.version("vllm") == upstream.VLLM_VERSION
    path = upstream.locate()
    assert path.is_file() and path.as_posix().endswith(upstream.UPSTREAM_FILE)
    module = upstream.load()
    assert module.__name__ == upstream.MODULE_NAME and module.__file__ == str(path)
    assert upstream.load() is module  # loaded once
    assert upstream.embedding_cache_class() is module.EmbeddingCache
    assert upstream.cache_entry_class() is module.CacheEntry


def test_vllms_class_keeps_the_shape_an_alloc_is_given() -> None:
    cache = upstream.embedding_cache_class()(4)
    entry = cache.alloc("a", 2, (3, 8))
    assert entry is not None and entry.shape == (3, 8) and entry.block_ids == (2, 3)
    assert not entry.ready and cache.get("a") is entry
    plain = cache.alloc("b", 1)
    assert plain is not None and plain.shape is None
    assert isinstance(entry, upstream.cache_entry_class())


def test_loading_imports_nothing_of_vllm_nor_torch() -> None:
    """vLLM's package ``__init__`` (which imports torch) never runs: the file runs alone."""
    code = textwrap.dedent(
        """
        import sys
        from embedding_cache_checker import upstream
        from embedding_cache_bench import implementations
        cache = implementations.seed_cache(8)
        assert cache.alloc("a", 3) is not None and len(cache) == 1
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("vllm", "torch"))
        print(loaded, type(cache).__mro__[1].__module__)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["[]", upstream.MODULE_NAME]


def test_a_missing_vllm_is_refused_with_the_install_command() -> None:
    with pytest.raises(upstream.UpstreamUnavailableError, match="vLLM is not installed") as caught:
        upstream.locate(missing)
    assert all(command in str(caught.value) for command in INSTALL)


def test_another_release_is_refused_naming_what_is_installed(tmp_path: Path) -> None:
    older = fake_vllm(tmp_path, "0.32.1")
    with pytest.raises(upstream.UpstreamUnavailableError) as caught:
        upstream.locate(lambda _name: older)
    assert "vllm 0.32.1 is installed" in str(caught.value)
    assert "vllm==0.33.0 exactly" in str(caught.value)
    assert all(command in str(caught.value) for command in INSTALL)


def test_the_pinned_release_without_its_file_is_refused(tmp_path: Path) -> None:
    fake = fake_vllm(tmp_path, upstream.VLLM_VERSION, with_file=False)
    with pytest.raises(upstream.UpstreamUnavailableError, match="is missing") as caught:
        upstream.locate(lambda _name: fake)
    assert all(command in str(caught.value) for command in INSTALL)


def test_the_file_is_found_through_the_distribution_and_loaded_by_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = fake_vllm(tmp_path, upstream.VLLM_VERSION)
    path = upstream.locate(lambda _name: fake)
    assert path == tmp_path / upstream.UPSTREAM_FILE
    monkeypatch.delitem(sys.modules, upstream.MODULE_NAME, raising=False)  # restored after
    module = upstream.load_file(path)
    assert module.EmbeddingCache.planted and sys.modules[upstream.MODULE_NAME] is module


def test_a_file_that_fails_to_load_is_not_left_registered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "embedding_cache.py"
    broken.write_text("raise ImportError('half a file')\n")
    monkeypatch.delitem(sys.modules, upstream.MODULE_NAME, raising=False)
    with pytest.raises(ImportError, match="half a file"):
        upstream.load_file(broken)
    assert upstream.MODULE_NAME not in sys.modules


def test_the_beyond_seed_bench_without_vllm_names_the_install_command_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(metadata, "distribution", missing)
    args = cli.build_parser().parse_args(["bench", "--speed-vs-seed"])
    problem = cli.missing_requirement(args)
    assert problem is not None and "\n" not in problem
    assert problem.startswith("embedding-cache bench --beyond-seed: vLLM is not installed")
    assert all(command in problem for command in INSTALL)
    policies = cli.build_parser().parse_args(["bench", "--policies"])
    assert cli.missing_requirement(policies) is None  # the policy bench needs no vLLM


def test_the_seed_differential_fails_without_vllm_and_never_skips() -> None:
    """CI must not lose the oracle silently: with vLLM absent the differential fails,
    and its report carries the install command."""
    code = textwrap.dedent(
        """
        import sys
        from importlib import metadata
        def missing(name):
            raise metadata.PackageNotFoundError(name)
        metadata.distribution = missing
        import pytest
        sys.exit(pytest.main(sys.argv[1:]))
        """
    )
    tests = Path(__file__).parent
    target = (
        f"{tests / 'test_seed_differential.py'}::test_the_seed_asserts_only_when_asserts_are_live"
    )
    environment = {k: v for k, v in os.environ.items() if k != "EMBEDDING_CACHE_CHECKED"}
    result = subprocess.run(
        [sys.executable, "-c", code, "-q", "-p", "no:cacheprovider", "-rs", target],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tests.parent,
        env=environment,
        check=False,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 failed" in result.stdout and "skipped" not in result.stdout
    assert "UpstreamUnavailableError" in result.stdout
    assert all(command in result.stdout for command in INSTALL)
