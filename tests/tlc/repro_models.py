"""Which bug models ``embedding-cache tlc --repro`` turns into tests, stated once.

test_repro.py runs ``tlc --repro`` on every one of ``BUG_MODELS`` (TLC checks
each against its expectation there), so test_models.py leaves them out
instead of running TLC on them a second time.
"""

from __future__ import annotations

from embedding_cache_checker.tlc.manifest import Model, find_tla_dir, load_manifest

TLA_DIR = find_tla_dir()
MODELS = load_manifest(TLA_DIR)
#: The liveness bug models (MCLiveness*) have lassos, which no finite test replays.
#: --repro does not translate the lease actions (Lease, Renew, LeaseRelease, Expire,
#: Tick) into calls yet, nor does it build an admission filter or translate
#: AllocDecline and the door, nor build a cache with contiguity: their planted twins
#: are linked all the same (planted/leases.py, planted/admission.py,
#: planted/contiguity.py, planted/combined.py), and the contracts catch those.
UNREPLAYED_TAGS = ("lease", "admission", "contiguity")


def _safety_bug(model: Model) -> bool:
    return "bug" in model.tags and "safety" in model.tags


#: The safety bug models (one operator override each) --repro turns into tests.
BUG_MODELS = [m for m in MODELS if _safety_bug(m) and not set(UNREPLAYED_TAGS) & set(m.tags)]
#: Every safety bug model but the lease ones has one linked planted bug.
LINKED_MODELS = [m for m in MODELS if _safety_bug(m) and "lease" not in m.tags]
