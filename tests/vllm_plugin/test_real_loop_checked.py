"""The plugin leaks nothing on the real engine loop in the contract-checked build too.

The build is read once, at import, so the runs happen in a child interpreter with
``EMBEDDING_CACHE_CHECKED=1``: every policy x configuration on the matrix's engine
and 2,000-step stream (``engine_loop.figures``), under vLLM's default
``AsyncScheduler``, each cache transition checked against its contract as it
runs. The child prints each run's figures as JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from embedding_cache import EVICTION_POLICIES
from embedding_cache_checker.engine.figures import CONFIGURATIONS

CHILD = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    import embedding_cache
    from embedding_cache_checker.engine_loop import LoopSpec, run
    from embedding_cache_checker.engine_loop.figures import MATRIX_STREAM, counts, matrix_runs
    from embedding_cache_checker.engine_loop.model_dir import write_model_dir

    assert embedding_cache.CHECKED, embedding_cache.BUILD_NAME
    model = write_model_dir(Path(sys.argv[1]))
    out = {}
    for label, settings in matrix_runs(True)[1:]:
        result = run(LoopSpec(settings, MATRIX_STREAM, idle_limit=3_000), model)
        out[label] = counts(result)
    print("RESULT " + json.dumps({"build": embedding_cache.BUILD_NAME, "runs": out}))
    """
)


def test_the_plugin_leaks_nothing_on_the_real_loop_in_the_checked_build(tmp_path: object) -> None:
    env = {**os.environ, "EMBEDDING_CACHE_CHECKED": "1"}
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=1_800,
    )
    assert child.returncode == 0, child.stderr[-4000:]
    line = next(x for x in child.stdout.splitlines() if x.startswith("RESULT "))
    result = json.loads(line.removeprefix("RESULT "))
    assert result["build"] != "default"
    # Every registered policy under every configuration, as the registry says.
    assert len(result["runs"]) == len(EVICTION_POLICIES) * len(CONFIGURATIONS)
    for label, figures in result["runs"].items():
        print(f"\nchecked {label}: {figures}")
        assert figures["preemptions"] > 0 and figures["checks"] > 0, label
        for name in ("never_made", "never_ready", "held_blocks", "lost", "encoder_misses"):
            assert figures[name] == 0, (label, name, figures)
        assert figures["reused_in_flight"] == 0, (label, figures)
        assert figures["push_work"] is False and figures["idle"] is True, (label, figures)
