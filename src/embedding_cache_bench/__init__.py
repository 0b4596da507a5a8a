"""``embedding-cache bench``: a realistic operation mix, timed on each build and pool size.

``workload`` generates and records the operation stream, ``runner`` times it
in the running build (and starts one child process per build), ``report``
prints the result, ``command`` wires it into the ``embedding-cache`` CLI.
``rounds`` is the one timing loop every side-by-side figure uses (contenders in
rotating order), and the ratios taken from it. ``implementations`` derives
what is measured from the runtime's registries (``EVICTION_POLICIES``,
``ALLOCATORS``). ``policies`` compares the eviction policies (``bench
--policies``): hit ratios (``hit_ratios``) on token-sized streams
(``streams``), per-op cost (``policy_costs``); ``plot`` draws its miss-ratio
curve.
``beyond`` runs ``bench --beyond-seed``: the package beside the seed's class
(vLLM's own, from the installed ``vllm==0.33.0``: ``embedding_cache_checker.upstream``,
``implementations``) on construction time, memory,
block contiguity (``contiguity``, on compare.py's op mix: ``shared_mix``),
speed (``seed_speed``) and per-op cost against pool size (``scale``).
``connector_report`` runs ``bench --connector`` (the engine's protocol on the
cache, ``connector``); ``real_scheduler_report`` runs ``bench --vllm``: vLLM's
real engine loop per pool (``real_scheduler``, on ``engine_loop``).
This is a benchmark for users, not a test: nothing here asserts a speed.

Its own package, beside the checker rather than inside it: it uses the
checker's engine harness, ``upstream`` and ``text_table``, the checker's
CLI imports ``command`` only when it builds its parser, and the runtime it
reaches as every tool does (``embedding_cache.verification``).
"""
