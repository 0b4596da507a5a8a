"""Reading TLC configs and the manifest."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from embedding_cache import EVICTION_POLICIES
from embedding_cache_checker.policies import adapters
from embedding_cache_checker.tlc.config import parse_config
from embedding_cache_checker.tlc.manifest import (
    PASS,
    ManifestError,
    Model,
    derived_manifest,
    find_tla_dir,
    load_manifest,
    select_models,
)

SAMPLE = """\\* a comment
CONSTANTS
    Keys = {k1,
            k2}
    N = 3   \\* blocks
    Evict <- EvictNewest
SPECIFICATION Spec
INVARIANTS TypeOK
    BlockConservationInv
PROPERTIES
    EvictOldestFirstProp
"""


def test_parse_config() -> None:
    config = parse_config(SAMPLE)
    assert config.constants == {"Keys": "{k1, k2}", "N": "3", "Evict": "<- EvictNewest"}
    assert config.invariants == ["TypeOK", "BlockConservationInv"]
    assert config.properties == ["EvictOldestFirstProp"]


def test_manifest_lists_existing_models() -> None:
    tla_dir = find_tla_dir()
    models = load_manifest(tla_dir)
    names = {m.name for m in models}
    assert {"MCSmoke", "MCDeep", "MCLarge", "MCRefinement", "MCLiveness"} <= names
    assert any(m.expect == PASS for m in models)
    assert [m.name for m in select_models(models, ["smoke"])] == ["MCSmoke"]
    with pytest.raises(ManifestError):
        select_models(models, ["NoSuchModel"])


#: The shared safety conditions, then each registered policy's order property and the
#: conditions of its own its checker adapter states on the code (gdsf's GdsfClockInv).
SAFETY = {
    "TypeOK",
    "BlockConservationInv",
    "EvictableSetInv",
    "EvictableCountInv",
    "HeldEntriesInv",
    "QuiescenceInv",
    "EvictOnlyAsNeededProp",
    "FailedAllocUnchangedProp",
    "AllocFailsOnlyWhenShortProp",
    "HeldBlocksStableProp",
    *(cls.order_property for cls in EVICTION_POLICIES.values()),
    *(name for part in adapters().values() for name in part.transition_properties),
}
LIVENESS = {"SaveResolvesProp", "PinReleasedProp", "AllocEventuallySucceedsProp"}


def test_every_invariant_and_property_has_a_bug_model() -> None:
    models = load_manifest(find_tla_dir())
    caught = {m.expect for m in models if m.expect != PASS}
    assert caught >= SAFETY | LIVENESS


#: The policies: the runtime registry's, never listed here.
POLICIES = frozenset(EVICTION_POLICIES)


def test_every_model_has_a_policy_field() -> None:
    """Every model names its policy; every registered policy has models, and no model
    names a policy the registry lacks."""
    tla_dir = find_tla_dir()
    raw = derived_manifest(tla_dir).models
    assert all("policy" in m for m in raw)
    assert {m["policy"] for m in raw} == POLICIES | {None}


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_select_by_policy(policy: str) -> None:
    models = load_manifest(find_tla_dir())
    selected = select_models(models, [policy])
    assert selected and all(m.policy == policy for m in selected)
    expects = {m.expect for m in selected}
    assert PASS in expects and "EvictableSetInv" in expects
    assert any("refinement" in m.tags for m in selected)


def test_head_insertion_caught_without_refinement() -> None:
    models = {m.name: m for m in load_manifest(find_tla_dir())}
    model = models["MCBugFifoHeadInsert"]
    assert model.expect == "EvictOldestFirstProp" and "refinement" not in model.tags


def test_bad_tla_dir(tmp_path: Path) -> None:
    with pytest.raises(ManifestError):
        find_tla_dir(str(tmp_path))


def test_big_models_stay_out_of_the_default_run_and_of_policy_selection() -> None:
    """A model marked ``default_run: false`` (minutes each) runs only when asked for by
    its name or tag, not with every model nor with its policy's."""
    models = load_manifest(find_tla_dir())
    outside = {m.name for m in models if not m.default_run}
    big = {m.name for m in models if m.name in outside and "big" in m.tags}
    # The rest are the inductive models (small, but not a reachable-state check: tag
    # ``inductive``, run by ``tlc --inductive`` and verify's tlc step).
    assert {m.name for m in models if m.name in outside - big} == {
        m.name for m in models if "inductive" in m.tags
    }
    assert {m.policy for m in models if m.name in big} == POLICIES  # one per policy at least
    assert not outside & {m.name for m in select_models(models, [])}
    for policy in POLICIES:
        assert not outside & {m.name for m in select_models(models, [policy])}
    assert {m.name for m in select_models(models, ["big"])} == big
    name = sorted(big)[0]
    assert [m.name for m in select_models(models, [name])] == [name]


def _comments(text: str) -> str:
    """The comment text of a TLA+ module or config (``\\*`` lines and ``(* *)`` boxes)."""
    lines = [line.split("\\*", 1)[1] for line in text.splitlines() if "\\*" in line]
    boxes = re.findall(r"\(\*(.*?)\*\)", text, re.DOTALL)
    return " ".join(" ".join([*lines, *boxes]).replace("*", " ").split())


def restated(model: Model, tla_dir: Path) -> list[str]:
    """The files of a bug model (its config, its root module) whose comments restate
    its defect or its expected violation: each is stated once, in the manifest.
    O(size of the two files)."""
    defect = " ".join(model.defect.split())
    return [
        file
        for file in (model.config, model.spec)
        if defect in (comments := _comments((tla_dir / file).read_text(encoding="utf-8")))
        or model.expect in comments
    ]


def test_each_defect_is_stated_once_in_the_manifest() -> None:
    tla_dir = find_tla_dir()
    bugs = [m for m in load_manifest(tla_dir) if m.expect != PASS]
    assert bugs and all(m.defect for m in bugs), [m.name for m in bugs if not m.defect]
    assert {m.name: restated(m, tla_dir) for m in bugs} == {m.name: [] for m in bugs}


def test_restated_defect_is_caught(tmp_path: Path) -> None:
    tla_dir = find_tla_dir()
    model = next(m for m in load_manifest(tla_dir) if m.defect)
    for file in (model.config, model.spec):
        (tmp_path / file).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / model.config).write_text(f"\\* Bug model: {model.defect}\n", encoding="utf-8")
    (tmp_path / model.spec).write_text(f"(* {model.expect} must fail. *)\n", encoding="utf-8")
    assert restated(model, tmp_path) == [model.config, model.spec]
