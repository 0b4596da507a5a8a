"""Run TLC on a model to dump its state graph (``-dump dot,actionlabels``)."""

from __future__ import annotations

import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ..tlc.config import read_config
from ..tlc.jar import locate_jar, locate_java
from .state_graph import StateGraph, load_dot
from .tla_values import parse_value


@dataclass
class DumpedModel:
    """A model's state graph and the constants the replay needs."""

    name: str
    graph: StateGraph
    keys: list[str]
    num_blocks: int
    max_pins: int
    tlc_seconds: float


def dump_state_graph(
    tla_dir: Path, model: str, workers: int = 2, timeout: float = 600.0
) -> DumpedModel:
    """Check ``model`` (``tla/<model>.tla`` + ``.cfg``) with TLC and parse its state graph.

    Raises RuntimeError when TLC does not finish cleanly (a model used for
    replay must pass: its graph is only complete then).
    """
    config = read_config(tla_dir / f"{model}.cfg")
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"dump-{model}-") as tmp:
        dot = Path(tmp) / "graph.dot"
        command = [
            str(locate_java()),
            "-XX:+UseParallelGC",
            "-cp",
            str(locate_jar()),
            "tlc2.TLC",
            "-dump",
            "dot,actionlabels",
            str(dot),
            "-workers",
            str(workers),
            "-metadir",
            str(Path(tmp) / "meta"),
            "-config",
            f"{model}.cfg",
            f"{model}.tla",
        ]
        proc = subprocess.run(command, cwd=tla_dir, capture_output=True, text=True, timeout=timeout)
        if "Model checking completed. No error has been found." not in proc.stdout:
            tail = "\n".join(proc.stdout.strip().splitlines()[-12:])
            raise RuntimeError(f"TLC did not pass {model}, so its graph is incomplete:\n{tail}")
        graph = load_dot(dot)
    keys = parse_value(config.constants["Keys"])
    num_blocks = parse_value(config.constants["N"])
    max_pins = parse_value(config.constants["MaxPins"])
    assert isinstance(keys, frozenset) and isinstance(num_blocks, int)
    assert isinstance(max_pins, int)
    return DumpedModel(
        name=model,
        graph=graph,
        keys=sorted(str(k) for k in keys),
        num_blocks=num_blocks,
        max_pins=max_pins,
        tlc_seconds=time.monotonic() - start,
    )
