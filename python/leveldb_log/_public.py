"""A module's dir() limited to its API: the names of its ``__all__``, its public submodules
that are loaded, and the dunders. Without it, dir() and tab completion also offer whatever
the module imports for its own use (``annotations``, ``Any``, ``os``, ...)."""

from __future__ import annotations

import types
from collections.abc import Callable, Mapping

__all__ = ["module_dir"]


def module_dir(namespace: Mapping[str, object]) -> Callable[[], list[str]]:
    """The ``__dir__`` (PEP 562) of the module whose globals() are ``namespace``."""
    package = namespace["__name__"]

    def __dir__() -> list[str]:
        names = set(namespace["__all__"])  # type: ignore[call-overload]
        for name, value in namespace.items():
            if name.startswith("__") and name.endswith("__"):
                names.add(name)
            elif (
                not name.startswith("_")
                and isinstance(value, types.ModuleType)
                and value.__name__ == f"{package}.{name}"
            ):
                names.add(name)  # a public submodule, once imported
        return sorted(names)

    return __dir__
