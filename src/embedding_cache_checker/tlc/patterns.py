"""Every pattern of TLC's output, in one place (TLC 2.15's wording).

TLC prints its verdict as one of a few fixed sentences, a counterexample as
``State i: <label>`` headers followed by ``/\\ var = value`` lines, source
positions as ``line L, col C to line L2, col C2 of module M``, and progress
and statistics lines whose wording differs between model checking,
simulation and the distributed server and workers. The parsers
(``output``, ``counterexample``), the launcher's progress relay (``runner``),
the simulator (``simulate``), distributed mode (``distributed``) and the
version probe (``jar``) all read TLC through these patterns, so one wording
change of TLC is one edit here.

Patterns of other texts stay with their parsers: a ``.cfg`` file's
(``config``, ``shapes.scale_config``), a TLA+ module's and the spec's
``lastOp`` record's (``counterexample``).
"""

from __future__ import annotations

import re

# -- the banner -----------------------------------------------------------------------------

#: ``TLC2 Version 2.15 of Day Month 20?? (rev: d5b5a7f)``.
VERSION = re.compile(r"^TLC2 Version (?P<v>.+?)\s*$", re.MULTILINE)

# -- verdicts (checked in this order by ``output``: a violation before an error) -------------

#: A violated state invariant, named.
INVARIANT = re.compile(r"^Error: Invariant (?P<name>\S+) is violated", re.MULTILINE)
#: A violated action property: ``what`` is its name, or the source position of
#: its expansion when it is a whole specification (``CoreSpec == Core!Spec``).
ACTION_PROPERTY = re.compile(
    r"^Error: Action property (?P<what>.+?) is violated\.?\s*$", re.MULTILINE
)
#: A violated temporal property (TLC does not name it).
TEMPORAL = re.compile(r"^Error: Temporal properties were violated", re.MULTILINE)
#: A state without successors.
DEADLOCK = re.compile(r"^Error: Deadlock reached", re.MULTILINE)
#: The modules or the config do not parse.
PARSE_ERROR = re.compile(
    r"^(Error: Parsing or semantic analysis failed|\*\*\* Parse Error \*\*\*"
    r"|Semantic errors:|Parse Error)",
    re.MULTILINE,
)
#: Any error line (after the specific ones above).
ERROR = re.compile(r"^Error: (?P<msg>.*)$", re.MULTILINE)
#: A complete check without a violation.
PASS = re.compile(r"^Model checking completed\. No error has been found", re.MULTILINE)

#: How the first line of an error paragraph starts (``output``'s message).
ERROR_STARTS = ("Error:", "*** Errors:", "Semantic errors:", "***Parse Error***")
#: Lines that end an error paragraph.
ERROR_ENDS = ("Starting...", "Finished in", "State 1:")

# -- the behaviour after a violation -------------------------------------------------------

#: The line before the behaviour of a safety violation or deadlock, and of a
#: temporal one (a lasso: its last line reads ``Back to state i``).
BEHAVIOUR = re.compile(
    r"^Error: (?:The behavior up to this point is:|The following behavior constitutes a"
    r" counter-example:)",
    re.MULTILINE,
)
#: The behaviour's header as the distributed server prints it, alone: without
#: the worker's message naming what was violated.
UNNAMED_BEHAVIOUR = "Error: The behavior up to this point is:"
#: ``State i: <label>``: a state of the behaviour and the action that produced it.
STATE_HEADER = re.compile(r"^State (?P<n>\d+): (?P<label>.*?)\s*$", re.MULTILINE)
#: The last line of a lasso: the behaviour loops back to state i.
BACK_TO = re.compile(r"^Back to state (?P<n>\d+)")
#: ``/\\ var = value`` (or ``var = value`` for a one-variable state).
VAR_LINE = re.compile(r"^(?:/\\ )?(?P<name>[A-Za-z_]\w*) = (?P<value>.*)$")
#: A state label naming an action: ``<Alloc line 12, col 5 ... of module M>``.
ACTION_LABEL = re.compile(r"^<(?P<name>\w+)(?: line \d+.*)?>$")
#: ``line L, col C to line L2, col C2 of module M`` (TLC's source ranges).
POSITION = re.compile(
    r"line (?P<line>\d+), col (?P<col>\d+) to line (?P<end_line>\d+), col (?P<end_col>\d+)"
    r" of module (?P<module>\w+)"
)

# -- statistics and progress of model checking ----------------------------------------------

#: The final statistics line.
STATS = re.compile(
    r"^(?P<gen>[\d,]+) states generated, (?P<distinct>[\d,]+) distinct states found",
    re.MULTILINE,
)
#: The initial states' count, with a symmetry (``... generated, with D of them distinct``)
#: or without (``D distinct states generated``).
INITIAL = re.compile(
    r"^Finished computing initial states: (?:[\d,]+ states generated, with )?"
    r"(?P<distinct>[\d,]+)(?: of them)? distinct",
    re.MULTILINE,
)
#: A progress line (each minute): depth, states generated, distinct states.
PROGRESS = re.compile(
    r"^Progress\((?P<depth>\d+)\).*?: (?P<gen>[\d,]+) states generated.*?"
    r"(?P<distinct>[\d,]+) distinct states found",
    re.MULTILINE,
)
#: The depth of a complete search.
DEPTH = re.compile(r"^The depth of the complete state graph search is (?P<d>\d+)", re.MULTILINE)
#: The lines worth relaying while TLC runs (its progress), for ``runner.run_tlc``.
PROGRESS_LINE = re.compile(
    r"^(Starting\.\.\.|Computing initial states|Finished computing|Progress\(|Checking \d+ branches"
    r"|Checking temporal|Finished checking temporal|Model checking completed|Error:"
    r"|\d[\d,]* states generated|Finished in)"
)
#: The last line of every run, a clean one included.
FINISHED = re.compile(r"^Finished in ", re.MULTILINE)
#: What trace validation's invariant prints for each state it reaches
#: (tla/trace/EmbeddingCacheTrace.tla's TraceProgress): the trace of the batch, and
#: how many of its steps the state has matched.
TRACE_PROGRESS = re.compile(r'^<<"trace", (?P<trace>\d+), (?P<matched>\d+)>>\s*$', re.MULTILINE)

# -- simulation (``-simulate``) -------------------------------------------------------------

#: The simulator's progress: states checked so far.
SIMULATION_PROGRESS = re.compile(r"^Progress: (?P<n>[\d,]+) states checked", re.MULTILINE)
#: The simulator's statistics after a violation.
SIMULATION_GENERATED = re.compile(r"^The number of states generated: (?P<n>[\d,]+)", re.MULTILINE)

# -- distributed mode -----------------------------------------------------------------------

#: The server accepts workers.
SERVER_READY = re.compile(r"^TLC server at .* is ready")
#: A worker registered with the server (the server's line).
WORKER_REGISTERED = re.compile(r"^Registration for worker at ")
#: A worker joined its server (the worker's line).
WORKER_READY = re.compile(r"^TLC worker with \d+ threads ready")
#: A worker found no ready server (the worker's line; it retries).
SERVER_UNREACHABLE = re.compile(r"^Server .* (unreachable|reachable but not ready)")
