"""``mutmut`` (3.x), taught to mutate the functions that carry a contract or are properties.

mutmut 3 rewrites every function it mutates into a *trampoline* that calls
the original or the active mutant, and it skips every decorated function
(other than ``@staticmethod``/``@classmethod``): re-running a decorator for
each copy could have side effects. That would leave out exactly the code
that matters most here: the six transitions (``@contracts.<op>_contract``)
and the entry's lifecycle predicates (``@property``).

Both decorators are safe to see through. A contract decorator returns the
function unchanged in the default build and wraps it in icontract checks in
the checked build; ``property`` only wraps. So this module lets mutmut
mutate such functions, keeps the decorators on the trampoline (the contract
then checks whichever mutant runs, once) and strips them from the original
and mutant copies (a copy must be a plain function: the trampoline calls
it, and a contract on it would run twice).

Every mutmut command goes through here (``python mutation/mutmut_cli.py run``,
``... results``, ``... show NAME``), so that ``show`` and ``apply`` render
mutants the way ``run`` made them. Pinned to mutmut >=3.8,<4: it patches
two internals (``MutationVisitor._skip_node_and_children`` and
``function_trampoline_arrangement``).
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider
from mutmut.__main__ import cli
from mutmut.mutation import file_mutation

#: Modules whose attributes are contract decorators (``@contracts.alloc_contract``).
CONTRACT_MODULES = frozenset({"contracts"})
#: Plain-name decorators that only wrap.
TRANSPARENT_NAMES = frozenset({"property"})


def _transparent(decorator: cst.Decorator) -> bool:
    """True for a decorator this module lets mutmut see through."""
    expr = decorator.decorator
    if isinstance(expr, cst.Name):
        return expr.value in TRANSPARENT_NAMES
    return (
        isinstance(expr, cst.Attribute)
        and isinstance(expr.value, cst.Name)
        and expr.value.value in CONTRACT_MODULES
    )


def _see_through(function: cst.FunctionDef) -> bool:
    """True when ``function`` is decorated, and only by transparent decorators."""
    return bool(function.decorators) and all(_transparent(d) for d in function.decorators)


_original_skip = file_mutation.MutationVisitor._skip_node_and_children
_original_arrangement = file_mutation.function_trampoline_arrangement


def _skip_node_and_children(self: file_mutation.MutationVisitor, node: cst.CSTNode) -> bool:
    """mutmut's rule, except that a function with only transparent decorators is mutated.

    The rules that still apply to such a function are kept: a
    ``# pragma: no mutate block`` on it, and mutmut's never-mutate names.
    """
    if isinstance(node, cst.FunctionDef) and _see_through(node):
        position = self.get_metadata(PositionProvider, node, None)
        if position is not None and position.start.line in self._ignored_node_lines:
            self.ignored_functions.add(node.name.value)
            return True
        return node.name.value in file_mutation.NEVER_MUTATE_FUNCTION_NAMES
    return _original_skip(self, node)


def _function_trampoline_arrangement(
    function: cst.FunctionDef, mutants: object, class_name: str | None
) -> tuple[object, list[object], object, object]:
    """mutmut's arrangement, with the transparent decorators only on the trampoline."""
    declarations, nodes, assignments, names = _original_arrangement(
        function,
        mutants,  # type: ignore[arg-type]
        class_name=class_name,
    )
    if not _see_through(function):
        return declarations, list(nodes), assignments, names
    # nodes: the trampoline, then the original's copy, then one copy per mutant.
    trampoline, *copies = nodes
    plain = [
        copy.with_changes(decorators=()) if isinstance(copy, cst.FunctionDef) else copy
        for copy in copies
    ]
    return declarations, [trampoline, *plain], assignments, names


file_mutation.MutationVisitor._skip_node_and_children = _skip_node_and_children  # type: ignore[method-assign]
file_mutation.function_trampoline_arrangement = _function_trampoline_arrangement  # type: ignore[assignment]

if __name__ == "__main__":
    cli()
