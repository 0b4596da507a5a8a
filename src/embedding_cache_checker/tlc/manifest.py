"""Read ``tla/models.json``: which models exist and what each must produce."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .families import Derived, FamilyError, expand

#: The manifest's file name inside the tla/ directory.
MANIFEST_NAME = "models.json"

#: Environment variable that overrides where the tla/ directory is.
TLA_DIR_ENV = "EMBEDDING_CACHE_TLA_DIR"

#: The expectation of a model that must check without any violation.
PASS = "pass"

#: The tag of a policy's main model: its block-level check of every invariant and
#: property with the ghost variables (simulated at production shape, ``simulate``).
MAIN_TAG = "main"


class ManifestError(ValueError):
    """The manifest is missing or malformed, or names an unknown model."""


@dataclass(frozen=True)
class Model:
    """One model of the manifest: a root module, its config and expectation."""

    name: str
    spec: str  # root module file inside tla/, e.g. "MCFifo.tla"
    config: str  # TLC config file inside tla/, e.g. "MCSmoke.cfg"
    expect: str  # "pass", or the invariant/property TLC must report violated
    budget_seconds: float
    checks: str  # the spec module this model checks (for humans and JSON)
    description: str  # the model's shape: policy, constants, reduction
    check_deadlock: bool
    tags: tuple[str, ...]
    policy: str | None = None  # eviction policy (EVICTION_POLICIES' name); None: the core
    policy_params: tuple[tuple[str, Any], ...] = ()  # the policy constants the config sets
    # False for a model too big for one process (run it by name, by its tag,
    # or distributed in the nightly profile): not part of the default run.
    default_run: bool = True
    # How simulation runs it, when not at the production shape: keys, blocks,
    # max_pins, level, depth and why (``shapes.simulation_plan`` reads it).
    simulation: tuple[tuple[str, Any], ...] = ()
    # A bug model's defect, in English: its one statement (the config holds only the
    # override that plants it, the root module neither). Empty for other models.
    defect: str = ""


def find_tla_dir(override: str | None = None) -> Path:
    """Return the tla/ directory: the override, $EMBEDDING_CACHE_TLA_DIR, or
    the nearest ``tla/`` holding a manifest above this file or the cwd."""
    explicit = override or os.environ.get(TLA_DIR_ENV)
    if explicit:
        path = Path(explicit)
        if not (path / MANIFEST_NAME).is_file():
            raise ManifestError(f"{path} has no {MANIFEST_NAME}")
        return path
    for start in (Path(__file__).resolve(), Path.cwd().resolve()):
        for parent in (start, *start.parents):
            if (parent / "tla" / MANIFEST_NAME).is_file():
                return parent / "tla"
    raise ManifestError(
        f"no tla/{MANIFEST_NAME} found above {Path(__file__).parent} or the "
        f"current directory; pass --tla-dir or set {TLA_DIR_ENV}"
    )


def _object(raw: dict[str, Any], key: str) -> dict[str, Any]:
    """The JSON object at ``key`` of an entry (empty when absent or null). O(1)."""
    value = raw.get(key) or {}
    if not isinstance(value, dict):
        raise TypeError(f"{key} must be an object, not {value!r}")
    return value


def _model(raw: dict[str, Any]) -> Model:
    """Build a Model from one manifest entry, checking field types."""
    try:
        name = str(raw["name"])
        return Model(
            name=name,
            spec=str(raw.get("spec", f"{name}.tla")),
            config=str(raw.get("config", f"{name}.cfg")),
            expect=str(raw["expect"]),
            budget_seconds=float(raw["budget_seconds"]),
            checks=str(raw.get("checks", "")),
            description=str(raw.get("description", "")),
            check_deadlock=bool(raw.get("check_deadlock", True)),
            tags=tuple(str(t) for t in raw.get("tags", ())),
            policy=None if raw.get("policy") is None else str(raw["policy"]),
            policy_params=tuple(sorted((raw.get("policy_params") or {}).items())),
            default_run=bool(raw.get("default_run", True)),
            simulation=tuple(sorted(_object(raw, "simulation").items())),
            defect=str(raw.get("defect", "")),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ManifestError(f"bad manifest entry {raw!r}: {exc}") from exc


def derived_manifest(tla_dir: Path) -> Derived:
    """Every model entry: tla/models.json's own, then each policy's (its entry's and
    those the families derive for it: ``families.expand``, which writes their files
    under tla/generated/). O(entries).

    Raises:
        ManifestError: the manifest or a policy entry cannot be read or is malformed.
    """
    path = tla_dir / MANIFEST_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ManifestError(f"cannot read {path}: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("models"), list):
        raise ManifestError(f"{path}: expected an object with a 'models' list")
    for section in ("models", "replay_models", "families"):
        raw = data.get(section, [])
        if not isinstance(raw, list) or not all(isinstance(e, dict) for e in raw):
            raise ManifestError(f"{path}: {section} must be a list of objects")
    try:
        return expand(tla_dir, data)
    except (FamilyError, KeyError, TypeError, ValueError) as exc:
        raise ManifestError(f"{path}: {exc}") from exc


def manifest_entries(tla_dir: Path) -> list[dict[str, Any]]:
    """Every raw model entry, ``models`` then ``replay_models`` (:func:`derived_manifest`).
    O(entries)."""
    derived = derived_manifest(tla_dir)
    return [*derived.models, *derived.replay_models]


def load_manifest(tla_dir: Path) -> list[Model]:
    """Return the manifest's models in order; raise ManifestError if invalid."""
    path = tla_dir / MANIFEST_NAME
    models = [_model(raw) for raw in derived_manifest(tla_dir).models]
    names = [m.name for m in models]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise ManifestError(f"{path}: duplicate model names {sorted(duplicates)}")
    for model in models:
        for file in (model.spec, model.config):
            if not (tla_dir / file).is_file():
                raise ManifestError(f"{path}: model {model.name}: {file} does not exist")
    return models


def main_models(models: list[Model]) -> dict[str, Model]:
    """Each policy's main model (tag :data:`MAIN_TAG`), by policy, in manifest order.
    O(models).

    Raises:
        ManifestError: a policy has two main models, or a main model has no policy.
    """
    mains: dict[str, Model] = {}
    for model in models:
        if MAIN_TAG not in model.tags:
            continue
        if model.policy is None:
            raise ManifestError(f"{model.name} is tagged {MAIN_TAG!r} but has no policy")
        if model.policy in mains:
            raise ManifestError(
                f"policy {model.policy} has two main models (tag {MAIN_TAG!r}): "
                f"{mains[model.policy].name} and {model.name}"
            )
        mains[model.policy] = model
    return mains


def default_models(models: list[Model]) -> list[Model]:
    """Return the models of the default run (``default_run`` true), in order."""
    return [m for m in models if m.default_run]


def select_models(models: list[Model], names: list[str]) -> list[Model]:
    """Return the named models, in manifest order; with no names, the default
    run (every model whose ``default_run`` is true).

    A name may also be a tag (e.g. ``bug``, ``big``) or a policy (a model's
    ``policy``), selecting every model with it; a model outside the
    default run (``default_run`` false: minutes each) comes only by its own
    name or a tag, not with its policy.
    """
    if not names:
        return default_models(models)
    known = (
        {m.name for m in models}
        | {t for m in models for t in m.tags}
        | {m.policy for m in models if m.policy}
    )
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ManifestError(f"unknown model(s) {unknown}; known: {sorted(known)}")
    wanted = set(names)

    def chosen(m: Model) -> bool:
        if m.name in wanted:
            return True
        if not m.default_run:  # a big model: by a tag other than its policy's name
            return bool(wanted & (set(m.tags) - {m.policy}))
        return bool(wanted & set(m.tags)) or m.policy in wanted

    return [m for m in models if chosen(m)]
