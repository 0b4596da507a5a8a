"""Which build is running: default, contract-checked, or fully checked.

Read once, at import, from the environment variable ``EMBEDDING_CACHE_CHECKED``:

* unset, empty or ``0`` -- the default build: no contracts beyond the typed
  misuse errors that production needs;
* ``1`` -- the contract-checked build: every transition checks its
  preconditions, its postconditions (what changed and what did not) and the
  invariants inductively, at a cost that does not grow with ``num_blocks``;
* ``full`` -- ``1`` plus the O(N) sweep of every invariant before and after
  every transition (for CrossHair and for tests over small caches).
"""

from __future__ import annotations

import os

_RAW = os.environ.get("EMBEDDING_CACHE_CHECKED", "").strip().lower()

if _RAW not in ("", "0", "1", "full"):
    raise ValueError(f"EMBEDDING_CACHE_CHECKED must be unset, '0', '1' or 'full', not {_RAW!r}")

#: True in the contract-checked build (``EMBEDDING_CACHE_CHECKED=1`` or ``full``).
CHECKED: bool = _RAW in ("1", "full")

#: True when every transition also sweeps every invariant (``EMBEDDING_CACHE_CHECKED=full``).
FULL_SWEEP: bool = _RAW == "full"

#: The build's name, as reports print it.
BUILD_NAME: str = "full" if FULL_SWEEP else ("checked" if CHECKED else "default")
