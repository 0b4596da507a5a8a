"""vLLM's own ``EmbeddingCache`` and ``CacheEntry``, loaded from the installed ``vllm==0.33.0``.

The cache is a drop-in for these classes (the seed), and two users compare
against them: the tests' seed differential (the oracle) and ``embedding-cache
bench`` (the speed, memory and contiguity baseline). The project carries no
copy of vLLM's code; this module takes the classes from the installed
distribution, the one pinned release (``VLLM_VERSION``, the ``vllm`` extra).

The class lives in one file, ``UPSTREAM_FILE``, which imports only the standard
library. The loader finds that file through the distribution's metadata and
executes it by path under a private module name (``MODULE_NAME``), so vLLM's
package ``__init__`` -- which imports torch and takes seconds -- never runs, and
neither does anything else of vLLM. It is loaded once, on first use (``load``):
importing this module loads nothing, so the commands that do not compare with
the seed run without vLLM.

The loaded module is untyped: ``UpstreamCache`` and ``UpstreamEntry`` describe
what the project reads of it (its public API and the private fields the bench
and the differential look at), and the accessors return the classes under
those types.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Protocol, cast

#: The release of vLLM whose class is the seed (pinned by the ``vllm`` extra).
VLLM_VERSION = "0.33.0"
#: The file that defines ``EmbeddingCache`` and ``CacheEntry``, inside the distribution.
UPSTREAM_FILE = "vllm/distributed/ec_transfer/ec_connector/cpu/scheduler/embedding_cache.py"
#: The private name the file is loaded under (never ``vllm.…``: vLLM's package is not imported).
MODULE_NAME = "_embedding_cache_checker_upstream_vllm_embedding_cache"
#: How to install it: from a checkout with the extra (vLLM and its dependencies), or the
#: distribution alone (this loader reads one standard-library-only file of it).
INSTALL_COMMAND = (
    f"pip install -e '.[vllm]' (or, without vLLM's dependencies: "
    f"pip install --no-deps vllm=={VLLM_VERSION})"
)

#: Looks a distribution up by name (``importlib.metadata.distribution``; tests plant fakes).
DistributionLookup = Callable[[str], metadata.Distribution]


class UpstreamUnavailableError(RuntimeError):
    """vLLM's class cannot be loaded: vLLM is missing, another release, or lacks the file.

    The message says what is installed and the command that installs the pinned release.
    """


class UpstreamEntry(Protocol):
    """vLLM's ``CacheEntry``, as the project reads it."""

    block_ids: tuple[int, ...]
    shape: tuple[int, int] | None
    _pin_count: int

    @property
    def ready(self) -> bool: ...

    @property
    def evictable(self) -> bool: ...


class UpstreamCache(Protocol):
    """vLLM's ``EmbeddingCache``: its public API and the fields the bench reads."""

    _num_blocks: int
    _free_blocks: list[int]
    _entries: dict[str, UpstreamEntry]

    def __init__(self, num_blocks: int) -> None: ...
    def get(self, key: str) -> UpstreamEntry | None: ...
    def has_held_entries(self) -> bool: ...
    def alloc(
        self, key: str, n_blocks: int, shape: tuple[int, int] | None = None
    ) -> UpstreamEntry | None: ...
    def mark_ready(self, key: str) -> None: ...
    def pin(self, key: str) -> None: ...
    def pin_if_ready(self, key: str) -> UpstreamEntry | None: ...
    def unpin(self, key: str) -> None: ...
    def discard(self, key: str) -> None: ...


def locate(lookup: DistributionLookup | None = None) -> Path:
    """The installed ``UPSTREAM_FILE`` of ``vllm==VLLM_VERSION``, found through ``lookup``
    (default: ``importlib.metadata.distribution``, looked up at the call). Imports
    nothing of vLLM.

    Raises:
        UpstreamUnavailableError: vLLM is not installed, is another release, or its
            installed files lack ``UPSTREAM_FILE``; the message names the install command.
    """
    wanted = f"vllm=={VLLM_VERSION}"
    try:
        distribution = (lookup or metadata.distribution)("vllm")
    except metadata.PackageNotFoundError:
        raise UpstreamUnavailableError(
            f"vLLM is not installed; the seed's EmbeddingCache is taken from {wanted}: "
            f"{INSTALL_COMMAND}"
        ) from None
    version = distribution.version
    if version != VLLM_VERSION:
        raise UpstreamUnavailableError(
            f"vllm {version} is installed; the seed's EmbeddingCache is taken from {wanted} "
            f"exactly: {INSTALL_COMMAND}"
        )
    path = Path(str(distribution.locate_file(UPSTREAM_FILE)))
    if not path.is_file():
        raise UpstreamUnavailableError(
            f"{wanted} is installed but {path} is missing; reinstall it: {INSTALL_COMMAND}"
        )
    return path


def load_file(path: Path) -> ModuleType:
    """Execute ``path`` as a fresh module named ``MODULE_NAME`` (registered in
    ``sys.modules``, as an import would), without importing any package around it."""
    spec = importlib.util.spec_from_file_location(MODULE_NAME, path)
    if spec is None or spec.loader is None:
        raise UpstreamUnavailableError(f"cannot load {path} as a module: {INSTALL_COMMAND}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[MODULE_NAME] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[MODULE_NAME]
        raise
    return module


@functools.cache
def load() -> ModuleType:
    """vLLM's ``embedding_cache`` module, loaded once (``locate``, then ``load_file``).

    Raises:
        UpstreamUnavailableError: as ``locate``; nothing is cached then, a later call
            tries again.
    """
    return load_file(locate())


def embedding_cache_class() -> type[UpstreamCache]:
    """vLLM's ``EmbeddingCache`` class (``load``).

    Raises:
        UpstreamUnavailableError: as ``locate``.
    """
    return cast("type[UpstreamCache]", load().EmbeddingCache)


def cache_entry_class() -> type[UpstreamEntry]:
    """vLLM's ``CacheEntry`` class (``load``).

    Raises:
        UpstreamUnavailableError: as ``locate``.
    """
    return cast("type[UpstreamEntry]", load().CacheEntry)
