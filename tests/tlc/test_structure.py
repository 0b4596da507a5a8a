"""The TLA+ modules' structure: one home for every definition.

Static checks on the text of the modules under ``tla/`` (no TLC needed): the glue between
the core and a policy lives only in ``EmbeddingCachePolicy.tla``, every policy
module imports it, and no definition's text is copied between modules. Each
check is shown to fail on a planted copy. O(total size of the modules).
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest

from embedding_cache import EVICTION_POLICIES
from embedding_cache_checker.tlc.config import read_config
from embedding_cache_checker.tlc.families import GENERATED_DIR
from embedding_cache_checker.tlc.manifest import find_tla_dir
from embedding_cache_checker.verify.plans import plan_entries

TLA_DIR = find_tla_dir()
GLUE = "EmbeddingCachePolicy.tla"


def policy_modules(tla_dir: Path) -> dict[str, str]:
    """Each policy's TLA+ module file, from the manifest: ``trace_module`` of the entry
    its trace validation instantiates (tla/models.json). O(manifest size)."""
    return {
        entry["policy"]: f"{entry['trace_module']}.tla"
        for entry in plan_entries(tla_dir)
        if entry.get("trace_module")
    }


#: The policy modules, one per policy of the registry (none listed here).
POLICY_MODULES = tuple(sorted(policy_modules(TLA_DIR).values()))
#: The glue's definitions: each must be defined in the glue module only.
GLUE_NAMES = (
    "fullVars",
    "Sizes",
    "Enough",
    "EvictLoop",
    "Evict",
    "CacheInit",
    "CacheAlloc",
    "CacheAllocFail",
    "CacheMarkReady",
    "Use",
    "CachePin",
    "CachePinIfReady",
    "CacheUnpin",
    "CacheDiscard",
    "CacheNext",
    "CacheSpec",
    "PolicyHistoryView",
    "CoreSpec",
)
#: The hooks the glue declares and every policy module defines.
HOOKS = (
    "PInit",
    "Admit",
    "Forget",
    "Ready",
    "Hit",
    "Hold",
    "Release",
    "HasVictim",
    "EvictOne",
)
#: Definitions shorter than this (normalised) are not reported as copies.
MIN_COPY = 60
#: The one allowed repetition: each check module's ``CheckSpec`` names its own
#: GhostInit/GhostStep/checkVars (TLC 2.15 rejects an operator applied to
#: arguments as the SPECIFICATION, so it cannot be a glue operator).
ALLOWED = {"CheckSpec == CacheInit /\\ GhostInit /\\ [][CacheNext /\\ GhostStep]_checkVars"}

_DEF = re.compile(r"^(?P<name>[A-Za-z_]\w*)(\(.*?\))?\s*==")
_BOUNDARY = ("----", "====", "(*", "\\*", "EXTENDS", "CONSTANT", "VARIABLE", "INSTANCE", "ASSUME")


def definitions(text: str) -> list[tuple[str, str]]:
    """The top-level definitions of a module as (name, normalised text): a definition
    starts at column 0 with ``Name ==`` or ``Name(args) ==`` and runs to the next
    blank line, comment or declaration. O(len(text))."""
    found: list[tuple[str, str]] = []
    current: list[str] = []
    name = ""

    def flush() -> None:
        if current:
            body = " ".join(re.sub(r"\\\*.*$", "", line) for line in current)
            found.append((name, " ".join(body.split())))

    for line in [*text.splitlines(), ""]:
        match = _DEF.match(line)
        if match or not line.strip() or line.startswith(_BOUNDARY) or line.startswith("RECURSIVE"):
            flush()
            current = [line] if match else []
            name = match.group("name") if match else ""
        elif current:
            current.append(line)
    return found


def modules(tla_dir: Path) -> dict[str, str]:
    """Every module under ``tla_dir`` (its subfolders too), by file name: names are
    unique (``test_module_names_are_unique``). O(total size)."""
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(tla_dir.rglob("*.tla"))}


def copies(texts: dict[str, str]) -> list[list[tuple[str, str]]]:
    """Definitions whose normalised text occurs in more than one module."""
    where: defaultdict[str, list[tuple[str, str]]] = defaultdict(list)
    for file, text in texts.items():
        for name, body in definitions(text):
            if len(body) >= MIN_COPY and body not in ALLOWED:
                where[body].append((file, name))
    return [sites for sites in where.values() if len({f for f, _ in sites}) > 1]


def homes(texts: dict[str, str], name: str) -> set[str]:
    """The modules that define name at top level."""
    return {f for f, text in texts.items() if any(n == name for n, _ in definitions(text))}


def test_no_definition_is_copied() -> None:
    """Among the modules written by hand: the roots under tla/generated/ repeat their
    family's one template per policy (an inductive model's ``InductiveInit``), which is
    written once, in tla/models.json."""
    written = {
        name: text
        for name, text in modules(TLA_DIR).items()
        if not (TLA_DIR / GENERATED_DIR / name).is_file()
    }
    assert copies(written) == []


def test_copy_check_catches_a_copied_definition() -> None:
    texts = modules(TLA_DIR)
    glue = dict(definitions(texts[GLUE]))
    planted = dict(texts)
    planted["EmbeddingCacheFifo.tla"] += f"\n{glue['CacheUnpin']}\n"
    assert copies(planted), "a glue definition pasted into a policy module must be reported"


@pytest.mark.parametrize("name", GLUE_NAMES)
def test_glue_has_one_home(name: str) -> None:
    assert homes(modules(TLA_DIR), name) == {GLUE}


def test_glue_home_check_catches_a_second_home() -> None:
    texts = modules(TLA_DIR)
    texts["EmbeddingCacheGdsf.tla"] += "\nEnough(n, got) == TRUE\n"
    assert homes(texts, "Enough") == {GLUE, "EmbeddingCacheGdsf.tla"}


def test_every_registered_policy_has_one_module() -> None:
    modules = policy_modules(TLA_DIR)
    assert set(modules) == set(EVICTION_POLICIES)
    assert len(set(modules.values())) == len(modules)
    assert all(list(TLA_DIR.rglob(module)) for module in modules.values())


@pytest.mark.parametrize("module", POLICY_MODULES)
def test_policy_module_defines_hooks_and_instantiates_glue(module: str) -> None:
    text = modules(TLA_DIR)[module]
    names = {n for n, _ in definitions(text)}
    assert set(HOOKS) <= names, sorted(set(HOOKS) - names)
    assert re.search(r"^INSTANCE EmbeddingCachePolicy\s*$", text, re.MULTILINE)
    # one policy variable, the record `policy`
    assert re.findall(r"^VARIABLES?\s+(\w+)", text, re.MULTILINE) == ["policy"]


def test_glue_declares_the_hooks() -> None:
    text = modules(TLA_DIR)[GLUE]
    declared = re.search(r"^CONSTANTS\s+(.*?)\n\n", text, re.MULTILINE | re.DOTALL)
    assert declared is not None
    assert set(re.findall(r"(\w+)(?:\([_, ]*\))?", declared.group(1))) == set(HOOKS)


#: The alloc operators and the one module defining each: the core's step with its
#: victims and blocks given, the core's alloc (any victims it allows), the glue's
#: alloc (the policy's victims); each with its fail-fast twin and its decline twin
#: (an admission filter's None: spec/SPEC.md section 13).
ALLOC_HOMES = {
    "AllocStep": "EmbeddingCache.tla",
    "Alloc": "EmbeddingCache.tla",
    "AllocFail": "EmbeddingCache.tla",
    "AllocDecline": "EmbeddingCache.tla",
    "CacheAlloc": GLUE,
    # The glue's alloc after an eviction given to it: CacheAlloc's (the policy's
    # loop) or the contiguity loop's (tla/contiguity/).
    "CacheAllocAfter": GLUE,
    "CacheAllocFail": GLUE,
    "CacheAllocDecline": GLUE,
}
#: An alloc action's name: Alloc or CacheAlloc, then an optional CamelCase word.
_ALLOC_NAME = re.compile(r"^(Cache)?Alloc([A-Z][a-z]+)?$")


def alloc_operators(texts: dict[str, str]) -> dict[str, set[str]]:
    """Each alloc operator's defining modules (bug variants, named ``<Op><Bug>``
    with two words or more, and properties are not alloc operators). O(total size)."""
    found: defaultdict[str, set[str]] = defaultdict(set)
    for file, text in texts.items():
        for name, _ in definitions(text):
            if _ALLOC_NAME.match(name) and not name.endswith(("Prop", "Condition")):
                found[name].add(file)
    return dict(found)


def test_alloc_operators_are_the_three_levels() -> None:
    assert alloc_operators(modules(TLA_DIR)) == {n: {m} for n, m in ALLOC_HOMES.items()}


def test_alloc_operator_check_catches_a_fourth() -> None:
    texts = modules(TLA_DIR)
    texts[GLUE] += "\nCacheAllocAny(k, n) == CacheAlloc(k, n)\n"
    assert "CacheAllocAny" in alloc_operators(texts)


def test_module_names_are_unique() -> None:
    # SANY finds a module by name along the launcher's search path (every folder
    # under tla/): two files of one name would make the first one win silently.
    names = [p.name for p in TLA_DIR.rglob("*.tla")]
    assert sorted(n for n in set(names) if names.count(n) > 1) == []


def test_each_policy_has_its_folder() -> None:
    # A policy is its folder tla/policies/<policy>/ (its modules and models) and its
    # manifest entries: its module lives there, and so does every model of it that
    # is not a model of the core's shared modules (tla/models/).
    for policy, module in policy_modules(TLA_DIR).items():
        assert (TLA_DIR / "policies" / policy / module).is_file(), (policy, module)


def params_out_of_step(tla_dir: Path, entries: list[dict[str, object]]) -> list[str]:
    """Each entry's ``policy_params`` and ``rule_params`` constant that its config sets to
    another value, or does not set (the checks build the code from the manifest and
    compare with the config: verify found one only after its whole run). O(entries)."""
    found = []
    for entry in entries:
        constants = read_config(tla_dir / str(entry["config"])).constants
        for field in ("policy_params", "rule_params"):
            params = entry.get(field) or {}
            assert isinstance(params, dict)
            for name, value in params.items():
                if constants.get(name, "").strip() != str(value):
                    found.append(
                        f"{entry['name']}: {field} {name} = {value}, config "
                        f"{constants.get(name, 'unset')}"
                    )
    return found


def test_manifest_params_are_the_configs_constants() -> None:
    assert params_out_of_step(TLA_DIR, plan_entries(TLA_DIR)) == []


def test_params_check_catches_a_manifest_out_of_step() -> None:
    entries = plan_entries(TLA_DIR)
    s3 = next(e for e in entries if e.get("policy") == "s3fifo" and e.get("policy_params"))
    wrong = {**s3, "policy_params": {**s3["policy_params"], "GhostCapacity": 99}}
    assert [f.split(":")[0] for f in params_out_of_step(TLA_DIR, [wrong])] == [s3["name"]]
