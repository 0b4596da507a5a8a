"""The request stream the real loop is fed: seeded, generated before any scheduler runs.

Per step of the arrival window, ``arrivals`` new requests (uniform) reach the
engine, each with ``items`` multimodal items (uniform) drawn by Zipf(``zipf``)
popularity over ``catalogue`` items; with probability ``repeat`` an item of the
request appears twice in it (vLLM schedules the second as a duplicate). An item's
size in rows (= its embeddings, = EC blocks) is drawn once per item,
log-uniform in ``rows``. A prompt lays its items out one after another between
runs of ``text`` words; each request asks for ``max_tokens`` output tokens. With
probability ``abort`` per step one unfinished request is aborted. KV shortage,
preemption and chunked prefill come from the engine's settings, not the stream:
prompts longer than ``max_num_batched_tokens`` are prefilled in chunks, and more
running requests than KV blocks make the scheduler preempt. Equal specs give
equal streams.
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..engine.stream import catalogue
from .model_dir import IMAGE_TOKEN_ID, WORDS

if TYPE_CHECKING:
    from vllm.v1.request import Request


@dataclass(frozen=True)
class ArrivalSpec:
    """Everything a stream is generated from."""

    steps: int = 2_000
    seed: int = 0
    catalogue: int = 400
    zipf: float = 0.9
    rows: tuple[int, int] = (16, 256)
    arrivals: tuple[int, int] = (0, 2)
    items: tuple[int, int] = (1, 3)
    repeat: float = 0.05
    text: tuple[int, int] = (1, 24)
    max_tokens: tuple[int, int] = (1, 8)
    abort: float = 0.02


@dataclass(frozen=True)
class Arrival:
    """One request: its id, prompt, items (key, rows, offset) and output length."""

    request_id: str
    prompt: tuple[int, ...]
    items: tuple[tuple[str, int, int], ...]
    max_tokens: int


@dataclass(frozen=True)
class StepEvents:
    """What reaches the engine before one step: new requests, and an abort draw."""

    arrivals: tuple[Arrival, ...]
    #: In [0, 1): which unfinished request is aborted (by its rank), or None.
    abort: float | None


def _prompt(
    rng: random.Random, spec: ArrivalSpec, items: list[tuple[str, int]]
) -> tuple[tuple[int, ...], tuple[tuple[str, int, int], ...]]:
    tokens: list[int] = []
    placed: list[tuple[str, int, int]] = []

    def words() -> None:
        tokens.extend(4 + rng.randrange(WORDS) for _ in range(rng.randint(*spec.text)))

    words()
    for key, rows in items:
        placed.append((key, rows, len(tokens)))
        tokens.extend([IMAGE_TOKEN_ID] * rows)
        words()
    return tuple(tokens), tuple(placed)


def generate(spec: ArrivalSpec) -> list[StepEvents]:
    """The stream: per step of the arrival window, its events. O(steps x items)."""
    keys, rows, cumulative = catalogue(spec)
    total = cumulative[-1]
    rng = random.Random(f"{spec.seed}:stream")
    out: list[StepEvents] = []
    serial = 0
    for _ in range(spec.steps):
        arrivals = []
        for _ in range(rng.randint(*spec.arrivals)):
            chosen: list[tuple[str, int]] = []
            for _ in range(rng.randint(*spec.items)):
                rank = bisect.bisect_left(cumulative, rng.random() * total)
                chosen.append((keys[rank], rows[rank]))
            if rng.random() < spec.repeat:
                chosen.append(rng.choice(chosen))
            prompt, placed = _prompt(rng, spec, chosen)
            arrivals.append(Arrival(f"r{serial}", prompt, placed, rng.randint(*spec.max_tokens)))
            serial += 1
        abort = rng.random() if rng.random() < spec.abort else None
        out.append(StepEvents(tuple(arrivals), abort))
    return out


def make_request(arrival: Arrival) -> Request:
    """vLLM's ``Request`` for ``arrival``: its prompt, its items as vLLM's
    ``MultiModalFeatureSpec`` placed by a ``PlaceholderRange``, greedy sampling of
    ``max_tokens`` tokens, EOS ignored. O(prompt)."""
    from vllm.multimodal.inputs import MultiModalFeatureSpec, PlaceholderRange
    from vllm.sampling_params import SamplingParams
    from vllm.v1.request import Request

    features = [
        MultiModalFeatureSpec(
            data=None,
            modality="image",
            identifier=key,
            mm_position=PlaceholderRange(offset=offset, length=rows),
        )
        for key, rows, offset in arrival.items
    ]
    params = SamplingParams(max_tokens=arrival.max_tokens, ignore_eos=True, temperature=0.0)
    return Request(
        request_id=arrival.request_id,
        prompt_token_ids=list(arrival.prompt),
        sampling_params=params,
        pooling_params=None,
        mm_features=features,
    )


def scripted(request_id: str, items: Sequence[tuple[str, int]], max_tokens: int = 1) -> Arrival:
    """A request written by hand: ``items`` ((key, rows) each) one after another,
    each after one word, then one more word. O(rows)."""
    tokens: list[int] = []
    placed: list[tuple[str, int, int]] = []
    for key, rows in items:
        tokens.append(4)
        placed.append((key, rows, len(tokens)))
        tokens.extend([IMAGE_TOKEN_ID] * rows)
    tokens.append(4)
    return Arrival(request_id, tuple(tokens), tuple(placed), max_tokens)
