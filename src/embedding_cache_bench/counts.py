"""What one simulation of a request stream counted: shared by the shipped policies'
runs (``hit_ratios``) and the offline reference's (``offline``)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class HitCounts:
    """What one policy answered to the counted part of one stream on one pool."""

    requests: int
    hits: int
    blocks_requested: int
    blocks_hit: int  # blocks of the hit entries
    allocs: int
    alloc_failures: int
    evictions: int
    cpu_seconds: float = field(default=0.0, compare=False)  # the whole run, warm-up included

    @property
    def request_hit_ratio(self) -> float:
        """Hits over requests."""
        return self.hits / self.requests if self.requests else 0.0

    @property
    def block_hit_ratio(self) -> float:
        """Blocks of the hit entries over blocks requested."""
        return self.blocks_hit / self.blocks_requested if self.blocks_requested else 0.0
