"""The cache's options, read from ``ec_connector_extra_config["embedding_cache"]``.

vLLM does not type-coerce ``ec_connector_extra_config``: a value given on the
command line may arrive as a string (``"4"``, ``"30"``, ``"none"``), and the
nested dict itself may arrive as a JSON string. Each option is parsed here, and
an unknown key or a bad value raises ``CacheOptionError`` naming the option,
when vLLM constructs the connector (so at start-up, not at the first request).

| key | values | default |
|---|---|---|
| ``eviction`` | a name of ``embedding_cache.EVICTION_POLICIES`` | ``"fifo"`` (the seed's) |
| ``allocator`` | a name of ``embedding_cache.ALLOCATORS`` | ``"stack"`` (the seed's) |
| ``contiguity`` | an int >= 0; > 0 needs ``allocator="extents"`` | ``0`` |
| ``admission`` | ``None``/``"none"``, or a name of ``ADMISSION_FILTERS`` | ``None`` |
| ``load_lease_seconds`` | a finite number > 0: how long a load's pin may live | ``30`` |

Imports nothing of vLLM.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from embedding_cache import (
    ADMISSION_FILTERS,
    ALLOCATORS,
    DEFAULT_ALLOCATOR,
    EVICTION_POLICIES,
    EmbeddingCache,
)
from embedding_cache.policies import DEFAULT_POLICY

#: The key of ``ec_connector_extra_config`` that holds the cache's options.
EXTRA_CONFIG_KEY = "embedding_cache"
#: A load's lease when none is given: far longer than a CPU->GPU copy takes, short
#: enough that a lost report frees its blocks within the minute (vLLM's NIXL producer
#: pins for the same 30 s: ``session.PRODUCER_PIN_LEASE_S``).
DEFAULT_LOAD_LEASE_SECONDS = 30.0
#: The strings that mean "no admission filter".
NO_ADMISSION = ("", "none", "null")


class CacheOptionError(ValueError):
    """An option of ``ec_connector_extra_config["embedding_cache"]`` is unknown or bad."""


@dataclass(frozen=True)
class CacheOptions:
    """The parsed options: how the plugin builds its ``EmbeddingCache`` and its leases."""

    eviction: str = DEFAULT_POLICY
    allocator: str = DEFAULT_ALLOCATOR
    contiguity: int = 0
    admission: str | None = None
    load_lease_seconds: float = DEFAULT_LOAD_LEASE_SECONDS


def _where(name: str) -> str:
    return f"ec_connector_extra_config[{EXTRA_CONFIG_KEY!r}][{name!r}]"


def _name(value: object, option: str, valid: Mapping[str, object]) -> str:
    if not isinstance(value, str) or value.strip() not in valid:
        raise CacheOptionError(
            f"{_where(option)}: {value!r} is not one of {', '.join(sorted(valid))}"
        )
    return value.strip()


def _contiguity(value: object) -> int:
    text = value.strip() if isinstance(value, str) else value
    if isinstance(text, str) and text.lstrip("+").isdigit():
        text = int(text)
    if isinstance(text, bool) or not isinstance(text, int) or text < 0:
        raise CacheOptionError(f"{_where('contiguity')}: {value!r} is not an int >= 0")
    return text


def _admission(value: object) -> str | None:
    if value is None or (isinstance(value, str) and value.strip().lower() in NO_ADMISSION):
        return None
    return _name(value, "admission", {**ADMISSION_FILTERS, "none": None})


def _seconds(value: object) -> float:
    seconds: float | None = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    elif isinstance(value, str):
        try:
            seconds = float(value.strip())
        except ValueError:
            seconds = None
    if seconds is None or not math.isfinite(seconds) or seconds <= 0:
        raise CacheOptionError(
            f"{_where('load_lease_seconds')}: {value!r} is not a finite number of seconds > 0"
        )
    return seconds


#: Option -> its parser.
_PARSERS: dict[str, Any] = {
    "eviction": lambda v: _name(v, "eviction", EVICTION_POLICIES),
    "allocator": lambda v: _name(v, "allocator", ALLOCATORS),
    "contiguity": _contiguity,
    "admission": _admission,
    "load_lease_seconds": _seconds,
}

#: The option names, in the table's order.
OPTION_NAMES = tuple(_PARSERS)


def _nested(extra_config: Mapping[str, Any]) -> Mapping[str, Any]:
    raw = extra_config.get(EXTRA_CONFIG_KEY)
    if raw is None:
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError as error:
            raise CacheOptionError(
                f"ec_connector_extra_config[{EXTRA_CONFIG_KEY!r}]: not a JSON object: {error}"
            ) from None
    if not isinstance(raw, Mapping):
        raise CacheOptionError(
            f"ec_connector_extra_config[{EXTRA_CONFIG_KEY!r}] must be a dict of options "
            f"({', '.join(OPTION_NAMES)}), not {type(raw).__name__}"
        )
    return raw


def parse_options(extra_config: Mapping[str, Any]) -> CacheOptions:
    """The options in ``extra_config[EXTRA_CONFIG_KEY]`` (a dict, or its JSON text),
    each parsed from its value or its string; the defaults for those not given.

    Raises:
        CacheOptionError: an unknown key, a bad value, or values the cache refuses
            together (``contiguity`` > 0 without ``allocator="extents"``); the message
            names the option.
    """
    given = _nested(extra_config)
    unknown = sorted(str(key) for key in given if key not in _PARSERS)
    if unknown:
        raise CacheOptionError(
            f"ec_connector_extra_config[{EXTRA_CONFIG_KEY!r}]: unknown option "
            f"{', '.join(map(repr, unknown))}; the options are {', '.join(OPTION_NAMES)}"
        )
    options = CacheOptions(**{key: _PARSERS[key](value) for key, value in given.items()})
    try:  # what the cache itself refuses in combination: an empty one checks it in O(1)
        EmbeddingCache(
            0,
            eviction=options.eviction,
            allocator=options.allocator,
            admission=options.admission,
            contiguity=options.contiguity,
        )
    except (TypeError, ValueError) as error:
        raise CacheOptionError(f"{_where('contiguity')}: {error}") from None
    return options
