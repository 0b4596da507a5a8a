"""The main job's model steps: ``tlc`` (the manifest's models of the chosen policies and of
the shared core meet their expectations) and ``conformance`` (each policy's replay models'
state graphs replayed on the code running that policy). Each replay runs in a forked child
(``bounded.run_bounded``), so that the pure-Python replay has a core of its own."""

from __future__ import annotations

import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from embedding_cache.policies import make_policy

from ..tlc.config import read_config
from ..tlc.inductive import PLANTED, inductive_models, layer_of
from ..tlc.jar import locate_jar, locate_java, tlc_version
from ..tlc.manifest import Model, default_models, load_manifest
from ..tlc.runner import ModelResult, run_model
from .alloc_rule import check_rule
from .bounded import Limits, Unit, run_bounded
from .config_override import overridden_tla_dir
from .graph_dump import DumpedModel, dump_state_graph, model_files
from .lease_replay import replay_any_graph
from .model_code import check_constants, policy_factory
from .planted import for_tla_model
from .records import ReplayRun

if TYPE_CHECKING:
    from .options import Job, VerifyOptions

#: Seconds the dump of a model cut deeper than its config may take (TLC is killed then).
DEEP_DUMP_TIMEOUT = 3600.0
#: A safety net for one replay of the real code in its child, not a budget: the deep
#: replay's largest graph, and the memory its reached states hold.
REPLAY_LIMITS = Limits(seconds=DEEP_DUMP_TIMEOUT, megabytes=16384)


# ---------------------------------------------------------------- tlc


#: Tags of the models that check a shared layer, the callers' obligations or a protocol,
#: with their policy standing in for any (``own_model``).
SHARED_LAYER_TAGS = frozenset({"protocol", "liveness"})


def own_model(model: Model) -> bool:
    """Whether ``model`` checks its policy's own rule: it has a policy, checks no shared
    layer with it standing in (``SHARED_LAYER_TAGS``), and, if a bug model, plants that
    policy's mistake (its planted twin, ``planted.for_tla_model``, is the policy's), not
    a shared layer's. O(catalogue)."""
    if model.policy is None or SHARED_LAYER_TAGS & set(model.tags):
        return False
    if "bug" not in model.tags:
        return True
    twin = for_tla_model(model.name)
    return twin is not None and twin.policy is not None


#: Tags of the larger instances of a model checked smaller too (MCLarge beside MCDeep):
#: a quick run of one policy (``tlc_models`` without ``full``) leaves them out.
LARGE_TAGS = frozenset({"large"})


def tlc_models(models: Iterable[Model], policies: Iterable[str], full: bool = True) -> list[Model]:
    """The models that check ``policies``, in manifest order: those of the default run of
    the chosen policies and the shared core's (``policy`` null); without ``full``, only
    the chosen policies' own (``own_model``) and not their larger instances
    (``LARGE_TAGS``). Then the inductive models (outside the default run:
    ``tlc.inductive``): with ``full``, the core's and every layer's of the chosen
    policies, the planted ones too; without, each chosen policy's own layer's
    (``policy``) only: its leases', admission's and contiguity's, and a planted twin,
    would add to a quick run kept short (their times: docs/MEASURED.md,
    "Invariants shown inductive"). O(models)."""
    chosen, listed = set(policies), list(models)
    checked = [
        m
        for m in default_models(listed)
        if (m.policy is None or m.policy in chosen)
        and (full or (own_model(m) and not LARGE_TAGS & set(m.tags)))
    ]
    inductive = [
        m
        for m in inductive_models(listed)
        if (m.policy in chosen and (full or (layer_of(m) == "policy" and PLANTED not in m.tags)))
        or (full and m.policy is None)
    ]
    return checked + inductive


def run_tlc_step(job: Job) -> None:
    """Check every model of ``tlc_models`` with TLC, ``workers`` models at a time, each
    on one TLC worker, the longest budgets first; results are reported as they come
    and kept in manifest order. Side by side beats one model on every worker: most
    models take seconds, mostly the JVM's start, and TLC's search of a small model
    does not keep two workers busy. O(the models)."""
    options, report = job.options, job.report
    java, jar = locate_java(), locate_jar()
    report.tlc_jar, report.tlc_version = str(jar), tlc_version(java, jar)
    models = tlc_models(load_manifest(options.tla_dir), options.policies, options.full)
    for model in models:
        report.tlc_policy[model.name] = model.policy
    longest_first = sorted(models, key=lambda m: -m.budget_seconds)
    results: dict[str, ModelResult] = {}
    with ThreadPoolExecutor(max_workers=max(1, options.workers)) as pool:
        running = [pool.submit(run_model, m, options.tla_dir, java, jar, 1) for m in longest_first]
        for done in as_completed(running):
            result = done.result()
            results[result.model.name] = result
            verdict = "ok" if result.ok else f"FAILED ({result.note})"
            cpu = "" if result.cpu_seconds is None else f", {result.cpu_seconds:.1f} CPU s"
            job.progress(
                f"tlc {result.model.name}: {result.result} in {result.seconds:.1f} s{cpu}: "
                f"{verdict}"
            )
    report.tlc.extend(results[m.name] for m in models)


# ---------------------------------------------------------------- conformance


def _check_policy(dump: DumpedModel, policy: str, tla_dir: Path) -> None:
    """The model is a model of ``policy`` (its manifest entry says so), the code's
    policy built from the entry's ``policy_params`` has the constants the model's config
    sets (e.g. s3fifo's derived SmallTarget), and so has its alloc rule (``DoorCapacity``,
    ``Contiguity``: the entry's ``rule_params``).

    Raises:
        ValueError: the manifest gives the model another policy, or a constant differs.
    """
    if dump.policy != policy:
        raise ValueError(
            f"{dump.name} is a {dump.policy} model (tla/models.json), not a {policy} one"
        )
    code = make_policy(policy_factory(policy, dump.policy_params), dump.num_blocks)
    constants = read_config(tla_dir / model_files(tla_dir, dump.name)[1]).constants
    problem = (
        check_constants(code, constants)
        or check_constants(code, dump.policy_params)
        or check_rule(dump.rule, constants)
    )
    if problem is not None:
        raise ValueError(f"{dump.name}: {problem}")


def config_depth(tla_dir: Path, model: str) -> int | None:
    """The ``ReplayDepth`` ``model``'s config sets (None: it sets none). O(config size)."""
    value = read_config(tla_dir / model_files(tla_dir, model)[1]).constants.get("ReplayDepth", "")
    return int(value) if value.strip().isdigit() else None


def _dump(
    options: VerifyOptions, policy: str, name: str, full: bool
) -> tuple[DumpedModel, int | None]:
    """Dump ``name``'s state graph, a bounded model cut at the profile's depth if it sets
    one, and check it is a model of ``policy``; (dump, the depth bound it was cut at)."""
    depth = None if full else options.profile.replay_depth
    if depth is None:
        dump = dump_state_graph(options.tla_dir, name, options.workers)
        _check_policy(dump, policy, options.tla_dir)
        return dump, config_depth(options.tla_dir, name)
    with overridden_tla_dir(options.tla_dir, name, {"ReplayDepth": str(depth)}) as tla_dir:
        dump = dump_state_graph(tla_dir, name, options.workers, timeout=DEEP_DUMP_TIMEOUT)
        _check_policy(dump, policy, tla_dir)
    return dump, depth


def run_conformance(job: Job, policy: str) -> None:
    """Replay each of ``policy``'s replay models (the bounded ones only with ``deep``) on
    the code; keeps the planted bugs' model in ``job.dumped``. Each next model is dumped
    by TLC while the one before it is replayed (the replay runs on one core), one dump
    ahead so that at most two graphs are held. O(TLC + edges replayed)."""
    options = job.options
    plan = options.plan(policy)
    kept = job.dumped.setdefault(policy, {})
    chosen = [(name, full) for name, full in plan.replayed if full or options.deep]
    with ThreadPoolExecutor(max_workers=1) as dumper:
        ahead = [dumper.submit(_dump, options, policy, *chosen[0])] if chosen else []
        for index, (name, full) in enumerate(chosen):
            dump, depth = ahead.pop().result()
            if index + 1 < len(chosen):
                ahead.append(dumper.submit(_dump, options, policy, *chosen[index + 1]))
            _replay_one(job, policy, name, full, dump, depth)
            if name in plan.planted_models:  # kept for the planted step
                kept[name] = dump


def _replay_one(
    job: Job, policy: str, name: str, full: bool, dump: DumpedModel, depth: int | None
) -> None:
    """Replay one dumped graph on the code running ``policy``, and report it."""
    overridden = not full and job.options.profile.replay_depth is not None
    start = time.monotonic()
    replay = partial(
        replay_any_graph,
        dump.graph,
        dump.keys,
        dump.num_blocks,
        dump.max_pins,
        policy=policy_factory(policy, dump.policy_params),
        rule=dump.rule,
    )
    # In a forked child: the replay is pure Python, and in this process it would share
    # one interpreter lock with the other lane's steps and the next graph's parse.
    [done] = run_bounded([Unit(name, f"conformance [{policy}]", replay, "model")], REPLAY_LIMITS)
    if done.gave_up or done.error is not None:
        raise RuntimeError(done.message if done.gave_up else f"replay of {name}: {done.error}")
    result = done.value
    seconds = time.monotonic() - start
    job.report.replays.append(
        ReplayRun(policy, name, result, full, dump.tlc_seconds, seconds, depth, overridden)
    )
    cut = "" if depth is None else f" (depth {depth}{', profile' if overridden else ''})"
    exact = (
        f" (block-exact: {result.states_reached}/{result.states} states reached, "
        f"{result.edges_other_choice} edges of other ids, {result.edges_unreached} out of "
        f"states not reached)"
        if result.block_exact
        else ""
    )
    job.progress(
        f"replay [{policy}] {name}{cut}: {result.edges_replayed}/{result.edges_total} edges"
        f"{exact}, {result.disabled_checked} refused calls, {len(result.mismatches)} "
        f"mismatches (TLC {dump.tlc_seconds:.1f} s, replay {seconds:.1f} s)"
    )
