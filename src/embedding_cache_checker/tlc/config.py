"""Read the parts of a TLC ``.cfg`` file the runner reports: constants and
the invariants and properties it checks."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

#: Section keywords of a TLC config (singular and plural forms).
_SECTIONS = {
    "CONSTANT": "constants",
    "CONSTANTS": "constants",
    "INVARIANT": "invariants",
    "INVARIANTS": "invariants",
    "PROPERTY": "properties",
    "PROPERTIES": "properties",
    "SPECIFICATION": "other",
    "INIT": "other",
    "NEXT": "other",
    "SYMMETRY": "other",
    "VIEW": "other",
    "CONSTRAINT": "other",
    "CONSTRAINTS": "other",
    "ACTION_CONSTRAINT": "other",
    "ACTION_CONSTRAINTS": "other",
}

_LINE_COMMENT = re.compile(r"\\\*.*$", re.MULTILINE)
_BLOCK_COMMENT = re.compile(r"\(\*.*?\*\)", re.DOTALL)
_ASSIGNMENT = re.compile(r"^(?P<name>\w+)\s*(?P<op>=|<-)\s*(?P<value>.+)$")


@dataclass
class ModelConfig:
    """What a model's config assigns and checks."""

    constants: dict[str, str] = field(default_factory=dict)  # name -> TLA+ text
    invariants: list[str] = field(default_factory=list)
    properties: list[str] = field(default_factory=list)


def parse_config(text: str) -> ModelConfig:
    """Parse the CONSTANTS, INVARIANTS and PROPERTIES sections of a config.

    Constants are kept as written: ``N = 3`` gives ``{"N": "3"}`` and an
    operator override ``Evict <- EvictNewest`` gives ``{"Evict": "<- EvictNewest"}``.
    A constant value may span lines (a set literal): continuation lines are
    joined until the brackets balance.
    """
    text = _LINE_COMMENT.sub("", _BLOCK_COMMENT.sub("", text))
    config = ModelConfig()
    section = "other"
    pending = ""
    for raw_line in text.splitlines():
        line = raw_line.strip()
        if not line:
            continue
        keyword, _, rest = line.partition(" ")
        if keyword in _SECTIONS and not pending:
            section = _SECTIONS[keyword]
            line = rest.strip()
            if not line:
                continue
        if section == "constants":
            pending = f"{pending} {line}".strip()
            if _balanced(pending):
                _add_constant(config, pending)
                pending = ""
        elif section == "invariants":
            config.invariants.extend(line.split())
        elif section == "properties":
            config.properties.extend(line.split())
    return config


def _balanced(text: str) -> bool:
    """True if every bracket opened in text is closed."""
    depth = 0
    for char in text:
        if char in "{(<[":
            depth += char != "<"  # '<' also starts '<-': only count real brackets
        elif char in "})]":
            depth -= 1
    return depth <= 0


def _add_constant(config: ModelConfig, text: str) -> None:
    """Record one ``name = value`` or ``name <- op`` assignment."""
    match = _ASSIGNMENT.match(text)
    if match is None:
        return
    value = match.group("value").strip()
    if match.group("op") == "<-":
        value = f"<- {value}"
    config.constants[match.group("name")] = value


def read_config(path: Path) -> ModelConfig:
    """Parse the config file at path."""
    return parse_config(path.read_text(encoding="utf-8"))
