"""The lease models of ``tla/leases/`` in the manifest (no TLC needed).

Every registered eviction policy (``embedding_cache.EVICTION_POLICIES``, never
listed here) has a lease safety model that must pass and checks
``LeasePinsInv``, ``LeaseDeadlineInv`` and ``ExpireOnlyDueProp`` with the
core's invariants; each lease defect has a bug model expected to violate its
property; the lease liveness models check ``LeaseReleasedProp`` with no
fairness on readers. TLC itself runs them in ``tests/tlc/test_models.py``
(bug models) and ``embedding-cache tlc lease``. Each check is shown to fail on
a planted gap. O(manifest size + the lease configs' size).
"""

from __future__ import annotations

import re
from pathlib import Path

from embedding_cache import EVICTION_POLICIES
from embedding_cache_checker.tlc.config import parse_config
from embedding_cache_checker.tlc.manifest import PASS, Model, find_tla_dir, load_manifest

TLA_DIR = find_tla_dir()
LEASE_TAG = "lease"
#: What every lease safety model checks besides the core's invariants.
LEASE_CHECKS = {"LeaseTypeOK", "LeasePinsInv", "LeaseDeadlineInv", "ExpireOnlyDueProp"}
#: The core's invariants and action properties the lease models keep checking.
CORE_CHECKS = {
    "TypeOK",
    "BlockConservationInv",
    "EvictableCountInv",
    "HeldEntriesInv",
    "QuiescenceInv",
    "PolicyTypeOK",
    "EvictableSetInv",
    "EvictOnlyAsNeededProp",
    "FailedAllocUnchangedProp",
    "AllocFailsOnlyWhenShortProp",
    "HeldBlocksStableProp",
}
#: Each lease defect's property: what its bug model must report violated.
BUG_EXPECTS = {"EvictableSetInv", "LeasePinsInv", "ExpireOnlyDueProp", "LeaseDeadlineInv"}


def lease_models(models: list[Model]) -> list[Model]:
    """The manifest's lease models (tag ``lease``), in order. O(models)."""
    return [m for m in models if LEASE_TAG in m.tags]


def checked(model: Model, tla_dir: Path) -> set[str]:
    """The invariants and properties a model's config checks. O(config size)."""
    config = parse_config((tla_dir / model.config).read_text(encoding="utf-8"))
    return set(config.invariants) | set(config.properties)


def uncovered_policies(models: list[Model], policies: set[str], tla_dir: Path) -> set[str]:
    """The policies without a passing lease safety model that checks the lease
    invariants and the core's. O(models)."""
    covered = {
        m.policy
        for m in lease_models(models)
        if m.expect == PASS
        and "safety" in m.tags
        and m.policy in m.tags
        and checked(m, tla_dir) >= LEASE_CHECKS | CORE_CHECKS
    }
    return policies - covered


def test_every_policy_has_a_lease_safety_model() -> None:
    models = load_manifest(TLA_DIR)
    assert uncovered_policies(models, set(EVICTION_POLICIES), TLA_DIR) == set()


def test_a_policy_without_a_lease_model_is_caught() -> None:
    models = load_manifest(TLA_DIR)
    policy = sorted(EVICTION_POLICIES)[0]
    kept = [m for m in models if not (LEASE_TAG in m.tags and m.policy == policy)]
    assert uncovered_policies(kept, set(EVICTION_POLICIES), TLA_DIR) == {policy}


def test_lease_models_live_in_the_lease_folder_and_keep_their_budget() -> None:
    # A policy's lease model is derived from the lease family (tla/generated/, written
    # from tla/models.json and its policy entry); the layer's own models live in its folder.
    for model in lease_models(load_manifest(TLA_DIR)):
        home = "generated/" if model.spec.startswith("generated/") else "leases/models/"
        assert model.spec.startswith(home) and model.config.startswith(home), model.name
        if "safety" in model.tags:  # budgets of the safety models: 60 s on 2 cores
            assert model.budget_seconds <= 60, model.name
        assert model.default_run, model.name


def test_each_lease_defect_has_a_bug_model() -> None:
    bugs = [m for m in lease_models(load_manifest(TLA_DIR)) if "bug" in m.tags]
    safety = {m.expect for m in bugs if "safety" in m.tags}
    assert safety >= BUG_EXPECTS
    for model in bugs:
        assert model.expect != PASS and model.defect, model.name
        if "safety" in model.tags:  # checks exactly what it must report violated
            assert checked(model, TLA_DIR) == {model.expect}, model.name


def overrides(model: Model, tla_dir: Path) -> list[str]:
    """The operator overrides (``Op <- ...``) of a model's config, without the
    constants bound to a model's own definitions (``Need <- MCNeed``,
    ``AllocCondition <- ...``). O(config size)."""
    config = parse_config((tla_dir / model.config).read_text(encoding="utf-8"))
    return [
        f"{name} {value}"
        for name, value in config.constants.items()
        if value.startswith("<-") and name not in {"Need", "AllocCondition"}
    ]


def test_each_lease_safety_bug_is_one_override_of_the_lease_module() -> None:
    bugs = [
        m for m in lease_models(load_manifest(TLA_DIR)) if "bug" in m.tags and "safety" in m.tags
    ]
    for model in bugs:
        found = overrides(model, TLA_DIR)
        assert len(found) == 1, (model.name, found)
        assert re.fullmatch(r"\w+ <- \[EmbeddingCacheLeases\] \w+", found[0]), found


def test_the_override_check_catches_a_plain_override(tmp_path: Path) -> None:
    # Reached through the bare INSTANCE, `Op <- Bug` would replace only the root's
    # copy of Op, and the bug model would pass: the module must be named.
    model = next(m for m in lease_models(load_manifest(TLA_DIR)) if "bug" in m.tags)
    text = (TLA_DIR / model.config).read_text(encoding="utf-8")
    (tmp_path / model.config).parent.mkdir(parents=True)
    (tmp_path / model.config).write_text(text.replace("[EmbeddingCacheLeases] ", ""), "utf-8")
    found = overrides(model, tmp_path)
    assert not re.fullmatch(r"\w+ <- \[EmbeddingCacheLeases\] \w+", found[0])


def test_lease_liveness_models() -> None:
    live = [m for m in lease_models(load_manifest(TLA_DIR)) if "liveness" in m.tags]
    passing = [m for m in live if m.expect == PASS]
    assert passing and all("LeaseReleasedProp" in checked(m, TLA_DIR) for m in passing)
    assert {m.expect for m in live} >= {PASS, "LeaseReleasedProp", "AllocEventuallySucceedsProp"}
    for model in live:
        text = (TLA_DIR / model.config).read_text(encoding="utf-8")
        # TLC's liveness checking is unsound with either
        assert not re.search(r"^\s*(VIEW|SYMMETRY)\b", text, re.MULTILINE), model.name
        # no fairness on readers: the spec named is one of the lease callers' specs
        spec = re.findall(r"^SPECIFICATION\s+(\w+)", text, re.MULTILINE)
        assert spec in (["LeaseCallersSpec"], ["NoExpiryFairnessSpec"]), model.name


def reader_fairness(text: str) -> list[str]:
    """The fairness conditions of a module's text that name a reader's action. O(len)."""
    return [f for f in re.findall(r"[WS]F_\w+\((.*)", text) if "Reader" in f]


def test_lease_callers_put_no_fairness_on_readers() -> None:
    text = (TLA_DIR / "leases" / "EmbeddingCacheLeaseCallers.tla").read_text(encoding="utf-8")
    assert re.search(r"[WS]F_\w+\(", text)
    assert reader_fairness(text) == []
    planted = text + "\nBad == WF_leaseCallerVars(ReaderRelease(r1))\n"
    assert reader_fairness(planted) == ["ReaderRelease(r1))"]
