"""Derive each policy's models from the manifest's families and the policy's entry.

A *family* (tla/models.json, ``families``; schema: tla/MANIFEST.md) is one kind of
model every policy has: its root module's template, its config's template and its
manifest fields, with the placeholders ``{policy}`` (the registry's name),
``{Policy}`` (the module's suffix), ``{module}`` (the policy's TLA+ module) and,
in the bug family, ``{bug}``. A *policy entry* (tla/policies/NAME/policy.json) names
the policy once: its module, its TLA+ constants, its own invariants and
properties, its bug models, what it overrides in a family, and any model of its
own written by hand. :func:`expand` applies every family to every policy entry and
writes the roots and configs it derives under ``tla/generated/`` (not kept in git:
they are the manifest's consequence), so a policy has no file outside its folder,
and removes the roots and configs there that it no longer derives (a renamed
family's, a removed policy's). ``embedding-cache tlc --print MODEL`` shows a
model's root and config.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Where the derived roots and configs go, inside tla/.
GENERATED_DIR = "generated"

#: Each policy's folder inside tla/, and its entry's file name there.
POLICIES_DIR = "policies"
POLICY_ENTRY = "policy.json"

#: A family applied once per policy, or once per bug model of the policy.
PER_POLICY = "policy"
PER_BUG = "bug"

#: Placeholders of a policy's own lists in a family's invariants and properties.
OWN_INVARIANTS = "{invariants}"
OWN_PROPERTIES = "{properties}"
#: The placeholder, in a root's body, of the conjunction of its config's invariants.
CONJUNCTION = "conjunction"

#: The fields of a policy entry (tla/MANIFEST.md, "Policy entries").
POLICY_FIELDS = frozenset(
    {
        "policy",
        "module",
        "params",
        "invariants",
        "properties",
        "trace_params",
        "families",
        "bugs",
        "models",
        "replay_models",
    }
)

#: The fields of a family (tla/MANIFEST.md, "Families").
FAMILY_FIELDS = frozenset({"family", "per", "section", "name", "root", "cfg", "entry"})

#: The fields of a config template (tla/MANIFEST.md, "Config templates").
CFG_FIELDS = frozenset(
    {
        "comment",
        "constants",
        "specification",
        "view",
        "constraint",
        "action_constraint",
        "symmetry",
        "invariants",
        "properties",
    }
)


class FamilyError(ValueError):
    """A family or a policy entry is malformed."""


@dataclass(frozen=True)
class Derived:
    """Every model entry the manifest holds once the families are applied."""

    models: list[dict[str, Any]]
    replay_models: list[dict[str, Any]]


def _object(raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise FamilyError(f"{where} must be a JSON object, not {raw!r}")
    return raw


def _fill(text: str, names: Mapping[str, str]) -> str:
    """``text`` with each ``{name}`` of ``names`` replaced. O(len(text) x names)."""
    for name, value in names.items():
        text = text.replace("{" + name + "}", value)
    return text


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``over``'s fields; a nested object (constants) is merged the
    same way, anything else replaced. O(fields)."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def policy_entries(tla_dir: Path) -> list[dict[str, Any]]:
    """Every policy entry (tla/policies/*/policy.json), by folder name. O(policies).

    Raises:
        FamilyError: an entry cannot be read, is not an object, has a field
            tla/MANIFEST.md does not define, or names another folder's policy.
    """
    entries: list[dict[str, Any]] = []
    for path in sorted((tla_dir / POLICIES_DIR).glob(f"*/{POLICY_ENTRY}")):
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise FamilyError(f"cannot read {path}: {exc}") from exc
        entry = _object(raw, str(path))
        unknown = sorted(set(entry) - POLICY_FIELDS)
        if unknown:
            raise FamilyError(f"{path}: unknown field(s) {unknown} (tla/MANIFEST.md)")
        for needed in ("policy", "module"):
            if not isinstance(entry.get(needed), str):
                raise FamilyError(f"{path}: {needed!r} must be a string")
        if entry["policy"] != path.parent.name:
            raise FamilyError(
                f"{path}: policy {entry['policy']!r} is not its folder's name {path.parent.name!r}"
            )
        entries.append(entry)
    return entries


def _names(policy: Mapping[str, Any], bug: str = "") -> dict[str, str]:
    module = str(policy["module"])
    return {
        "policy": str(policy["policy"]),
        "Policy": module.removeprefix("EmbeddingCache"),
        "module": module,
        "bug": bug,
    }


def _own(items: Iterable[str], policy: Mapping[str, Any]) -> list[str]:
    """A family's invariant or property list with the policy's own lists put in. O(items)."""
    out: list[str] = []
    for item in items:
        if item == OWN_INVARIANTS:
            out += [str(i) for i in policy.get("invariants", ())]
        elif item == OWN_PROPERTIES:
            out += [str(p) for p in policy.get("properties", ())]
        else:
            out.append(str(item))
    return out


def render_config(cfg: Mapping[str, Any]) -> str:
    """A TLC config's text from a config template, filled in. O(size)."""
    unknown = sorted(set(cfg) - CFG_FIELDS)
    if unknown:
        raise FamilyError(f"config template: unknown field(s) {unknown} (tla/MANIFEST.md)")
    lines = [f"\\* {cfg['comment']}"] if cfg.get("comment") else []
    constants = cfg.get("constants") or {}
    if constants:
        lines.append("CONSTANTS")
        for name, value in constants.items():
            text = str(value)
            lines.append(f"    {name} {text}" if text.startswith("<- ") else f"    {name} = {text}")
    lines.append("")
    for key, keyword in (
        ("specification", "SPECIFICATION"),
        ("view", "VIEW"),
        ("constraint", "CONSTRAINT"),
        ("action_constraint", "ACTION_CONSTRAINT"),
        ("symmetry", "SYMMETRY"),
    ):
        if cfg.get(key):
            lines.append(f"{keyword} {cfg[key]}")
    for key, keyword in (("invariants", "INVARIANTS"), ("properties", "PROPERTIES")):
        if cfg.get(key):
            lines += ["", keyword, *(f"    {name}" for name in cfg[key])]
    return "\n".join(lines) + "\n"


def render_root(name: str, extends: Sequence[str], body: Sequence[str], origin: str) -> str:
    """A root module's text: its EXTENDS and body lines, under a generated-file
    header. O(size)."""
    title = f" MODULE {name} "
    dashes = max(4, (77 - len(title)) // 2)
    head = "-" * dashes + title + "-" * max(4, 77 - len(title) - dashes)
    lines = [
        head,
        f"\\* Generated from {origin} (embedding-cache tlc): do not edit.",
        f"EXTENDS {', '.join(extends)}",
    ]
    if body:
        lines += ["", *body]
    lines.append("=" * 77)
    return "\n".join(lines) + "\n"


def _description(
    text: str, constants: Mapping[str, Any], names: Mapping[str, str], params: Iterable[str]
) -> str:
    """A family's description with its names and the config's constants put in:
    ``{N}``, ``{MaxPins}``, ..., ``{keys}`` (how many keys), ``{level}`` (unquoted),
    ``{params}`` (", Name value" for each of the policy's constants). O(size)."""
    values = dict(names)
    for key, value in constants.items():
        values[key] = str(value)
    keys = str(constants.get("Keys", ""))
    values["keys"] = str(len([k for k in keys.strip("{}").split(",") if k.strip()]))
    values["level"] = str(constants.get("Level", "")).strip('"')
    values["params"] = "".join(f", {k} {constants[k]}" for k in params if k in constants)
    return _fill(text, values)


def _write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` unless it already holds it; atomically, so two
    processes deriving at once never leave a torn file. O(size)."""
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(temp, path)


@dataclass(frozen=True)
class _Model:
    """One derived model: its manifest entry, and the files it needs."""

    section: str
    entry: dict[str, Any]
    files: dict[str, str]  # path inside tla/ -> text


def _derive_one(
    family: Mapping[str, Any], policy: Mapping[str, Any], bug: Mapping[str, Any]
) -> _Model:
    """The model ``family`` gives ``policy`` (and ``bug``, in the bug family). O(size)."""
    fid = str(family["family"])
    names = _names(policy, str(bug.get("bug", "")))
    over = _object(policy.get("families", {}).get(fid, {}), f"{policy['policy']}: families.{fid}")
    cfg = _merge(family.get("cfg", {}), {"constants": dict(policy.get("params", {}))})
    cfg = _merge(cfg, over.get("cfg", {}))
    cfg = _merge(cfg, bug.get("cfg", {}))
    entry = _merge(_merge(family.get("entry", {}), over.get("entry", {})), bug.get("entry", {}))
    overrides = {k: f"<- {v}" for k, v in bug.get("override", {}).items()}
    cfg = _merge(cfg, {"constants": overrides})
    cfg["comment"] = _fill(str(cfg.get("comment", "")), names)
    cfg["invariants"] = _own(cfg.get("invariants", ()), policy)
    cfg["properties"] = _own(cfg.get("properties", ()), policy)
    if bug and not cfg["invariants"] and not cfg["properties"]:
        expect = str(entry["expect"])
        cfg["properties" if expect.endswith(("Prop", "Spec")) else "invariants"] = [expect]
    name = _fill(str(family["name"]), names)
    root = _object(family["root"], f"family {fid}: root")
    root_name = _fill(str(root["name"]), names)
    origin = f"tla/models.json's families and tla/policies/{names['policy']}/{POLICY_ENTRY}"
    spec = f"{GENERATED_DIR}/{root_name}.tla"
    config = f"{GENERATED_DIR}/{name}.cfg"
    constants = cfg.get("constants", {})
    params = {k: constants[k] for k in policy.get("params", {}) if k in constants}
    full = {
        "name": name,
        "spec": spec,
        "config": config,
        "policy": names["policy"],
        **{k: v for k, v in entry.items() if k not in ("description", "checks", "tags")},
        "policy_params": {k: int(v) for k, v in params.items()},
        "description": _description(
            str(entry.get("description", "")), constants, names, policy.get("params", {})
        ),
        "family": fid,
    }
    if "checks" in entry:
        full["checks"] = _fill(str(entry["checks"]), names)
    if "tags" in entry:
        full["tags"] = [*entry["tags"], names["policy"]]
    if "trace_module" in full:
        full["trace_module"] = _fill(str(full["trace_module"]), names)
        full["trace_params"] = dict(policy.get("trace_params", {}))
    if "defect" in full:
        full["defect"] = _fill(str(full["defect"]), names)
    # The root's body may conjoin the config's invariants (an inductive model's Init
    # is TypeOK /\ Inv: EmbeddingCacheInductive), so the two lists are one.
    body_names = {**names, CONJUNCTION: " /\\ ".join(cfg["invariants"]) or "TRUE"}
    files = {
        spec: render_root(
            root_name,
            [_fill(str(e), names) for e in root.get("extends", ())],
            [
                _fill(str(line), body_names)
                for line in (*root.get("body", ()), *over.get("root_body", ()))
            ],
            origin,
        ),
        config: render_config(cfg),
    }
    return _Model(str(family.get("section", "models")), full, files)


def derive(families: Sequence[Mapping[str, Any]], policy: Mapping[str, Any]) -> list[_Model]:
    """Every model the families give ``policy``, in family order (the bug family once
    per bug, in the entry's order), less the families it skips. O(families x bugs)."""
    out: list[_Model] = []
    for family in families:
        unknown = sorted(set(family) - FAMILY_FIELDS)
        if unknown:
            raise FamilyError(f"family {family.get('family')!r}: unknown field(s) {unknown}")
        fid = str(family["family"])
        if policy.get("families", {}).get(fid, {}).get("skip"):
            continue
        if family.get("per", PER_POLICY) == PER_BUG:
            out += [
                _derive_one(family, policy, _object(b, f"{policy['policy']}: bugs"))
                for b in policy.get("bugs", ())
            ]
        else:
            out.append(_derive_one(family, policy, {}))
    return out


def remove_stale(folder: Path, kept: Iterable[Path]) -> list[Path]:
    """Remove the roots and configs (``.tla``, ``.cfg``) in ``folder`` that are not
    ``kept``: what an earlier derivation wrote and this one does not. Other files, and
    the temporary files ``_write`` renames into place, are left. Returns those
    removed. O(files in folder)."""
    keep = set(kept)
    removed = []
    for path in sorted(folder.glob("*")):
        if path.suffix in (".tla", ".cfg") and not path.name.startswith(".") and path not in keep:
            path.unlink(missing_ok=True)  # another process may have removed it first
            removed.append(path)
    return removed


def expand(tla_dir: Path, manifest: Mapping[str, Any]) -> Derived:
    """The manifest's model entries with every policy's: its hand-written ones, then
    those its families derive; the derived files written under tla/generated/ (only
    where they changed), and the roots and configs there it no longer derives
    removed. O(policies x families + files).

    Raises:
        FamilyError: a family or policy entry is malformed, or two derive one name.
    """
    families = [_object(f, "a family") for f in manifest.get("families", ())]
    models = list(manifest.get("models", ()))
    replay = list(manifest.get("replay_models", ()))
    files: dict[str, str] = {}
    for policy in policy_entries(tla_dir):
        own = {"policy": policy["policy"]}
        models += [{**own, **e} for e in policy.get("models", ())]
        replay += [{**own, **e} for e in policy.get("replay_models", ())]
        for model in derive(families, policy):
            (replay if model.section == "replay_models" else models).append(model.entry)
            for path, text in model.files.items():
                if files.setdefault(path, text) != text:
                    raise FamilyError(f"{path} is derived twice, differently")
    for path, text in files.items():
        _write(tla_dir / path, text)
    if files:
        remove_stale(tla_dir / GENERATED_DIR, (tla_dir / path for path in files))
    return Derived(models, replay)
