"""The one vLLM release the plugin is written against, checked when vLLM starts it.

The plugin subclasses vLLM's ``ECCPUConnector`` and ``ECCPUScheduler`` and relies on
their private fields (``_cache``, ``_pending_loads``, ``_load_acks``, ...), which
any release may change: another version is refused at construction.
"""

from __future__ import annotations

#: The vLLM release the plugin supports (the project's ``vllm`` extra pins it).
SUPPORTED_VLLM_VERSION = "0.33.0"


class UnsupportedVllmError(RuntimeError):
    """The installed vLLM is not ``SUPPORTED_VLLM_VERSION``; the message names both."""


def installed_vllm_version() -> str:
    """``vllm.__version__``, read at the call (imports vllm). O(1)."""
    import vllm

    return str(vllm.__version__)


def require_supported_vllm(installed: str | None = None) -> None:
    """Raise ``UnsupportedVllmError`` unless ``installed`` (default: the installed
    vLLM's version) is ``SUPPORTED_VLLM_VERSION``. O(1)."""
    found = installed_vllm_version() if installed is None else installed
    if found != SUPPORTED_VLLM_VERSION:
        raise UnsupportedVllmError(
            f"embedding_cache_vllm supports vLLM {SUPPORTED_VLLM_VERSION} only, and vLLM "
            f"{found} is installed: pip install 'vllm=={SUPPORTED_VLLM_VERSION}' (or use "
            f"vLLM's own ECCPUConnector)"
        )
