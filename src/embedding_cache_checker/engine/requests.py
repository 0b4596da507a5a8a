"""The requests the scheduler is given: light objects with vLLM's own item types.

``ECCPUScheduler`` reads a request's ``request_id``, ``mm_features`` (vLLM's
``MultiModalFeatureSpec``, placed by a ``PlaceholderRange``) and
``ec_transfer_params``; nothing else of vLLM's ``Request`` (which needs a
tokenized prompt and sampling parameters).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from .stubs import MODALITY

if TYPE_CHECKING:
    from vllm.v1.request import Request as VllmRequest


@dataclass
class EngineRequest:
    """What the EC scheduler reads of a request."""

    request_id: str
    mm_features: list[Any]
    ec_transfer_params: dict[str, Any] | None = field(default=None)


def make_request(request_id: str, items: tuple[tuple[str, int], ...]) -> VllmRequest:
    """A request of ``items`` ((key, rows) each), laid out one after another in the
    prompt; each item's embeddings are its rows. O(items)."""
    from vllm.multimodal.inputs import MultiModalFeatureSpec, PlaceholderRange

    features = []
    offset = 0
    for key, rows in items:
        place = PlaceholderRange(offset=offset, length=rows)
        features.append(
            MultiModalFeatureSpec(data=None, modality=MODALITY, identifier=key, mm_position=place)
        )
        offset += rows
    return cast("VllmRequest", EngineRequest(request_id, features))
