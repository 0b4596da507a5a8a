"""Run TLC on a model to dump its state graph (``-dump dot,actionlabels``).

TLC is started through ``tlc.runner.run_tlc`` by the package's one launcher,
``tlc.process.TlcProcess``. The model's root module and config are its
manifest entry's ``spec`` and ``config`` (paths inside tla/, under ``models``
or ``replay_models``; ``<model>.tla`` and ``<model>.cfg`` when absent). The
model's eviction policy (and its parameters) come from its manifest entry's
``policy`` / ``policy_params`` fields (tla/models.json, under ``models`` or
``replay_models``; the parameters are the policy module's TLA+ constants); a
model the manifest does not list, or an entry without them, is a fifo model.
Its alloc rule (``alloc_rule.AllocRule``: an admission filter with its capacity, or
contiguity on the extents allocator) comes from the entry's ``admission``,
``allocator`` and ``rule_params``; an entry without them has the seed's rule.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from embedding_cache.policies import DEFAULT_POLICY

from ..tlc.config import read_config
from ..tlc.manifest import ManifestError, manifest_entries
from ..tlc.output import TlcOutcome
from ..tlc.runner import run_tlc
from .alloc_rule import SEED_RULE, AllocRule, rule_of_entry
from .state_graph import StateGraph, load_dot
from .tla_values import parse_value


@dataclass
class DumpedModel:
    """A model's state graph and the constants the replay needs."""

    name: str
    graph: StateGraph
    keys: list[str]
    num_blocks: int
    max_pins: int
    tlc_seconds: float
    policy: str = DEFAULT_POLICY
    policy_params: dict[str, int] = field(default_factory=dict)  # TLA+ constants, by name
    #: The model's alloc rule (its manifest entry's): what the code's cache runs.
    rule: AllocRule = SEED_RULE


def manifest_entry(tla_dir: Path, model: str) -> dict[str, Any]:
    """The raw manifest entry of ``model`` ({} when the manifest does not list it or
    cannot be read), each policy's entries included. O(models)."""
    try:
        entries = manifest_entries(tla_dir)
    except ManifestError:
        return {}
    return next((raw for raw in entries if raw.get("name") == model), {})


def model_files(tla_dir: Path, model: str) -> tuple[str, str]:
    """(root module, config) of ``model``, paths relative to ``tla_dir``: its manifest
    entry's ``spec`` and ``config``, else ``<model>.tla`` and ``<model>.cfg``. O(models)."""
    entry = manifest_entry(tla_dir, model)
    return str(entry.get("spec") or f"{model}.tla"), str(entry.get("config") or f"{model}.cfg")


def model_policy(tla_dir: Path, model: str) -> tuple[str, dict[str, int]]:
    """(policy name, its TLA+ constants) of ``model``, from its manifest entry
    (``policy``, ``policy_params``: e.g. ``{"Scale": 2, "MaxFreq": 2}``)."""
    entry = manifest_entry(tla_dir, model)
    params = entry.get("policy_params") or {}
    return str(entry.get("policy") or DEFAULT_POLICY), {str(k): int(v) for k, v in params.items()}


def model_rule(tla_dir: Path, model: str) -> AllocRule:
    """The alloc rule of ``model``, from its manifest entry (``alloc_rule.rule_of_entry``).

    Raises:
        ValueError: the entry names an unknown filter or rule constant.
    """
    return rule_of_entry(manifest_entry(tla_dir, model))


def dump_state_graph(
    tla_dir: Path, model: str, workers: int = 2, timeout: float = 600.0
) -> DumpedModel:
    """Check ``model`` (its root module and config: :func:`model_files`) with TLC and
    parse its state graph.

    O(states + edges) after TLC. Raises RuntimeError when TLC does not finish
    cleanly (a model used for replay must pass: its graph is only complete then).
    """
    spec, config_file = model_files(tla_dir, model)
    config = read_config(tla_dir / config_file)
    policy, params = model_policy(tla_dir, model)
    rule = model_rule(tla_dir, model)
    with tempfile.TemporaryDirectory(prefix=f"dump-{model}-") as tmp:
        dot = Path(tmp) / "graph.dot"
        run = run_tlc(
            spec,
            config_file,
            tla_dir,
            workers=workers,
            dump=dot,
            timeout=timeout,
            label=model,
        )
        if run.output.outcome is not TlcOutcome.PASS or run.timed_out:
            tail = "\n".join(run.raw_output.strip().splitlines()[-12:])
            raise RuntimeError(f"TLC did not pass {model}, so its graph is incomplete:\n{tail}")
        graph = load_dot(dot)
    keys = parse_value(config.constants["Keys"])
    num_blocks = parse_value(config.constants["N"])
    max_pins = parse_value(config.constants["MaxPins"])
    assert isinstance(keys, frozenset) and isinstance(num_blocks, int)
    assert isinstance(max_pins, int)
    return DumpedModel(
        name=model,
        graph=graph,
        keys=sorted(str(k) for k in keys),
        num_blocks=num_blocks,
        max_pins=max_pins,
        tlc_seconds=run.seconds,
        policy=policy,
        policy_params=params,
        rule=rule,
    )
