"""What the real-loop tests share: the model directory (made once per process)."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

from embedding_cache_checker.engine_loop import require_vllm
from embedding_cache_checker.engine_loop.model_dir import write_model_dir


@functools.cache
def model_dir() -> Path:
    """The tiny LLaVA's directory, written into a fresh temporary folder once per
    process (pytest-xdist's workers each make their own). Fails, naming the install
    command, without vLLM 0.33.0."""
    require_vllm()
    return write_model_dir(Path(tempfile.mkdtemp(prefix="embedding-cache-llava-")))
