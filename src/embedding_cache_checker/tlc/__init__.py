"""Run the TLA+ models in ``tla/`` with TLC and check their expected results.

The subpackage is self-contained (it imports nothing else from
``embedding_cache``): ``jar`` finds TLC and Java, ``manifest`` reads
``tla/models.json``, ``config`` reads a model's ``.cfg``, ``output`` parses
TLC's output, ``runner`` runs one model, ``report`` renders results and
``command`` is the ``embedding-cache tlc`` subcommand.
"""

from __future__ import annotations
