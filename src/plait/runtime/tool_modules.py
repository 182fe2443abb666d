"""A python tool's module name and its spec's folder → the module, loaded from that folder.

Python caches modules by name for the whole process, so a second spec whose
folder also has a `tools.py` would get the first spec's. Modules are kept here
by (folder, name) instead. While one folder's module is imported, modules that
other folders loaded under the same names step out of `sys.modules` (and this
folder's step in, so its modules import their own siblings); afterwards every
name goes back to its earlier holder, so `sys.modules` keeps the first spec's.
"""

from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType

__all__ = ["load"]

#: Spec folder → the modules imported from it, by name.
_LOADED: dict[str, dict[str, ModuleType]] = {}


def load(module_name: str, base_dir: str | None) -> ModuleType:
    if not base_dir:
        return importlib.import_module(module_name)
    own = _LOADED.setdefault(base_dir, {})
    module = own.get(module_name)
    if module is not None:
        return module
    _path_first(base_dir)
    displaced: dict[str, ModuleType | None] = {}
    for folder, modules in _LOADED.items():
        if folder != base_dir:
            for name, other in modules.items():
                if sys.modules.get(name) is other:
                    displaced[name] = sys.modules.pop(name)
    for name, mine in own.items():
        displaced.setdefault(name, sys.modules.get(name))
        sys.modules[name] = mine
    before = set(sys.modules)
    try:
        module = importlib.import_module(module_name)
    finally:
        inside = os.path.join(os.path.realpath(base_dir), "")
        for name in set(sys.modules) - before:
            if os.path.realpath(getattr(sys.modules[name], "__file__", None) or "").startswith(inside):
                own[name] = sys.modules[name]
        for name, holder in displaced.items():
            if holder is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = holder
    return module


def _path_first(base_dir: str) -> None:
    # The spec's own modules win over installed ones of the same name.
    if not sys.path or sys.path[0] != base_dir:
        if base_dir in sys.path:
            sys.path.remove(base_dir)
        sys.path.insert(0, base_dir)
