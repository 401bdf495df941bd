"""A stand-in for the Transformer Engine package, just enough for Megatron-LM to import and
for TE's recipe classes to run (TE needs CUDA to build; this machine has none).

What it fakes, and nothing else:
  1. `transformer_engine.__version__` is "2.20.2", the released TE that the recipe module
     matches; Megatron reads it for its `is_te_min_version` gates.
  2. `transformer_engine.common` is a plain package (the real one loads the CUDA library
     libtransformer_engine.so); it holds only `recipe`, which is TE's own, unchanged
     `transformer_engine/common/recipe/__init__.py` (copied in by the oracle's setup from
     TransformerEngine at d0067d0d).  Every recipe check (pydantic field types, each
     recipe's __post_init__) is TE's real code.
  3. `transformer_engine.pytorch` and each of its submodules are placeholders: any name in
     them is a placeholder class (it can be subclassed, called, and asked for attributes,
     which are placeholders too).  Megatron imports about fifty of these names (layers,
     tensor classes, fp8_autocast) when its modules load; the validation path the oracle runs
     calls none of them.  Because every name exists, Megatron's "does this TE have X" probes
     all succeed: they gate kernels and features, not FP8/FP4 config checks.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
from typing import Any

__version__ = "2.20.2"
_FAKED = "transformer_engine.pytorch"


class _PlaceholderMeta(type):
    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _placeholder(name, cls.__module__)


def _instance_getattr(self: object, name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    return _placeholder(name, type(self).__module__)


def _placeholder(name: str, module: str) -> type:
    def init(self: object, *args: object, **kwargs: object) -> None:
        pass

    body = {"__module__": module, "__init__": init, "__getattr__": _instance_getattr}
    return _PlaceholderMeta(name, (), body)


class _PlaceholderModule(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        value = _placeholder(name, self.__name__)
        setattr(self, name, value)
        return value


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname == _FAKED or fullname.startswith(_FAKED + "."):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = _PlaceholderModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


sys.meta_path.insert(0, _Finder())

from . import common  # noqa: E402  (after the finder: nothing in common needs it, but keep order)

__all__ = ["__version__", "common"]
