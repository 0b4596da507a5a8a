"""The plugin leaks nothing in the contract-checked build too (``EMBEDDING_CACHE_CHECKED=1``).

The build is read once, at import, so the runs happen in a child interpreter with
the variable set: every policy x configuration of ``engine.figures``, on a short
stream, each cache transition checked against its contract as it runs. The child
prints each run's counts as JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from embedding_cache_checker.engine.figures import plugin_options

CHILD = textwrap.dedent(
    """
    import dataclasses, json
    import embedding_cache
    from embedding_cache_checker.engine import CacheChoice, EngineSpec, StreamSpec, run
    from embedding_cache_checker.engine.figures import LEAK_SHORT, plugin_options

    assert embedding_cache.CHECKED, embedding_cache.BUILD_NAME
    settings, _ = LEAK_SHORT
    stream = StreamSpec(steps=200, unscheduled=0.2)
    out = {}
    for label, options in plugin_options():
        result = run(EngineSpec(stream, settings, CacheChoice("plugin", options)))
        counts = dataclasses.asdict(result.counters)
        counts.pop("step_seconds")
        out[label] = {"counters": counts, "end": dataclasses.asdict(result.end)}
    print("RESULT " + json.dumps({"build": embedding_cache.BUILD_NAME, "runs": out}))
    """
)


def test_the_plugin_leaks_nothing_in_the_checked_build() -> None:
    # Without vLLM the child fails naming the install command (engine.require_vllm),
    # and its stderr is this test's failure message.
    env = {**os.environ, "EMBEDDING_CACHE_CHECKED": "1"}
    child = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, timeout=900
    )
    assert child.returncode == 0, child.stderr[-4000:]
    line = next(x for x in child.stdout.splitlines() if x.startswith("RESULT "))
    result = json.loads(line.removeprefix("RESULT "))
    assert result["build"] != "default"
    assert len(result["runs"]) == len(plugin_options())  # every policy x configuration
    for label, run in result["runs"].items():
        c, e = run["counters"], run["end"]
        print(f"\nchecked {label}: {c['hits']} hits, {c['checked_hits_lost']} lost")
        assert (c["checked_hits_lost"], c["saves_never_made"], c["reused_in_flight"]) == (0, 0, 0)
        assert (e["never_ready"], e["held_blocks"], e["pending_push_work"]) == (0, 0, False), label
        assert 0 < c["loads"] <= c["hits"] and c["unscheduled"] > 0
