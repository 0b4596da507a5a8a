"""Run the TLA+ models in ``tla/`` with TLC and check their expected results.

The modules, each with one job:

* ``jar``: find TLC's jar and Java; the java command line's start; the version probe.
* ``process``: the one launcher: a ``TlcCommand`` started as a ``TlcProcess``.
* ``patterns``: every pattern of TLC's output.
* ``manifest``: read ``tla/models.json``; ``families``: derive each policy's models
  from the manifest's families and its ``policy.json``; ``config``: read a model's ``.cfg``.
* ``output``: parse TLC's output (outcome, statistics, trace).
* ``counterexample``: name what a failure violated, and its readable step table;
  ``steps``: the step table itself.
* ``runner``: check one model and judge it; ``report``: tables and JSON of results.
* ``shapes`` and ``simulate``: random simulation at production shape.
* ``cluster`` and ``distributed``: distributed TLC (a server and its workers).
* ``repro_writer``: a failing model's counterexample written as a pytest file.
* ``command``: the ``embedding-cache tlc`` subcommand (``distributed`` registers
  ``tlc-worker``).

What it imports from outside: the checker's ``text_table`` (``report``,
``steps``), and for ``repro_writer`` alone, because a counterexample is replayed on
the code as the conformance checks replay states, the runtime's
``embedding_cache.policies`` and the checker's ``abstraction`` and ``verify``
(``verify.replay``, ``verify.counterexample_replay``, ``verify.planted``,
``verify.tla_values``); ``command`` imports ``repro_writer``; ``shapes``, at call time,
``verify.model_code.derived_constants``, so that a config scaled to another pool size
gets the policy's derived constants (s3fifo's ``SmallTarget``) as the code's policy
derives them. Every other module needs only the standard library, TLC and Java.
"""

from __future__ import annotations
