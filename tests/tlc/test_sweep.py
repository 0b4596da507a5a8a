"""``embedding-cache tlc --sweep``: a bug model's smallest shape and its
counterexample's length (spec/POLICIES.md section 6)."""

from __future__ import annotations

import pytest

from embedding_cache_checker.tlc.jar import locate_jar, locate_java
from embedding_cache_checker.tlc.manifest import Model, find_tla_dir, load_manifest, select_models
from embedding_cache_checker.tlc.sweep import SweepError, shaped_config, smallest, sweep

TLA_DIR = find_tla_dir()

CONFIG = """\\* a bug model
CONSTANTS
    Keys = {k1, k2, k3}
    N = 3
    MaxPins = 2
    Evict <- EvictNewest
"""


def test_a_shape_replaces_keys_and_blocks_and_keeps_the_rest() -> None:
    text = shaped_config(CONFIG, 1, 2)
    assert "Keys = {k1}\n" in text and "    N = 2\n" in text
    assert "MaxPins = 2" in text and "Evict <- EvictNewest" in text
    with pytest.raises(SweepError, match="no Keys"):
        shaped_config("CONSTANTS\n    N = 3\n", 1, 1)


def _model(name: str) -> Model:
    return select_models(load_manifest(TLA_DIR), [name])[0]


def test_a_model_that_expects_no_violation_is_not_swept() -> None:
    with pytest.raises(SweepError, match="expects no violation"):
        sweep(_model("MCCore"), TLA_DIR, locate_java(), locate_jar())


@pytest.mark.tlc
def test_the_sweep_finds_the_measured_smallest_shape_and_length() -> None:
    # spec/POLICIES.md section 6: MCBugDiscardKeepsBlocks shows at 1 key, 1 block,
    # in 2 steps (alloc, discard); a 2-key shape shows it in 2 steps too.
    model = _model("MCBugDiscardKeepsBlocks")
    results = sweep(model, TLA_DIR, locate_java(), locate_jar(), keys=(1, 2), blocks=(1,))
    best = smallest(model, results)
    assert best is not None and (best.keys, best.blocks, best.steps) == (1, 1, 2)
    assert all(r.result == model.expect and r.steps == 2 for r in results)
