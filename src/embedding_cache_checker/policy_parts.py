"""Finding a policy's parts by its name: the one way the checker and the tests do it.

A policy is listed once, in the runtime registry (``EVICTION_POLICIES``); each
of its other parts is a module named after it in a package of its own: its
checker module (``embedding_cache_checker.verify.planted.<name>``: its planted
bugs and its adapter, ``ADAPTER``), its reference model
(``tests/reference_models/<name>.py``). ``policy_part`` imports that module
and returns the attribute that holds the part, or says exactly which file is
missing, so adding a policy adds files and edits none.
"""

from __future__ import annotations

import importlib


def policy_part(package: str, policy: str, attribute: str, what: str) -> object:
    """``attribute`` of the module ``package.policy``: the policy's ``what``. O(1) after
    the first import.

    Raises:
        LookupError: the module does not exist, or does not define ``attribute``; the
            message names the policy, what is missing and the module to write.
    """
    module_name = f"{package}.{policy}"
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:  # the module exists but imports something missing
            raise
        raise LookupError(
            f"eviction policy {policy!r} is registered but has no {what}: "
            f"write the module {module_name} defining {attribute}"
        ) from None
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise LookupError(f"{module_name} must define {attribute} ({what})") from None
