"""Fingerprints of the code a process would run, so that stored executables follow patched code.

The executable store (:mod:`conformance.adapters.numpyro.store.executables`) skips tracing, so
its keys must see what this process runs: start-up patches, subclasses, switched settings.
Files show none of these, so this module hashes the live objects. The Merkle hash gives equal
code equal tokens in any process, whatever the hash seed, addresses or order. Paths read as
``<path>``, so another clone finds the same entries. Plain values count only in
:attr:`CodeScope.settings` packages: elsewhere they are run-time state, and the store keys JAX's
settings through ``jax.config``. Code from outside the framework counts with the globals it
names. A class of :attr:`CodeScope.separable` counts only in the keys that reach it. Blind
spots: docs/running.md, "Code you patch and the executable store".
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import os
import re
import sys
import sysconfig
import types
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Values that are their own token.
_PLAIN = (type(None), bool, int, float, complex, str, bytes)
#: Callables whose identity is their name (C functions and methods, slot wrappers).
_NAMED_CALLABLES = (
    types.BuiltinFunctionType,
    types.BuiltinMethodType,
    types.WrapperDescriptorType,
    types.MethodWrapperType,
    types.MethodDescriptorType,
    types.ClassMethodDescriptorType,
    types.GetSetDescriptorType,
    types.MemberDescriptorType,
)
#: Wrappers of one function (or three): code, whatever else they hold.
_WRAPPERS = (staticmethod, classmethod, property, types.MethodType, functools.partial)
#: What is code by its nature, wherever it is met.
_CODE = (type, types.FunctionType, types.CodeType, *_WRAPPERS, *_NAMED_CALLABLES)


@dataclass(frozen=True)
class CodeScope:
    """Which live code a fingerprint covers.

    ``packages``: top-level packages whose loaded modules are walked whole (``jax``,
    ``numpyro``). ``modules``: more modules walked whole (an adapter's own). ``imports``:
    modules imported before walking, so the set walked is the same whichever item ran first.
    ``settings``: packages whose plain values count (see the module docstring).
    ``separable``: dotted path of a base class whose subclasses are hashed per binding."""

    packages: tuple[str, ...]
    modules: tuple[str, ...] = ()
    imports: tuple[str, ...] = ()
    settings: tuple[str, ...] = ()
    separable: str | None = None

    def walks(self, module_name: str) -> bool:
        return module_name.partition(".")[0] in self.packages or module_name in self.modules


def _digest(*parts: str) -> str:
    text = "\x00".join(parts).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(text, digest_size=16).hexdigest()


def _short(value: Any) -> str:
    """A name for sorting and for things known by name: a plain value itself, a class or
    callable by its qualified name."""
    if isinstance(value, _PLAIN):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, type):
        return f"class:{value.__module__}.{value.__qualname__}"
    name = getattr(value, "__qualname__", None) or getattr(value, "name", None)
    return f"{type(value).__module__}.{type(value).__qualname__}:{name}"


def _installed_roots() -> tuple[str, ...]:
    """The standard library's and installed distributions' directories: code there is
    versioned (keyed elsewhere) and not walked through."""
    roots = {sysconfig.get_paths()[name] for name in ("stdlib", "platstdlib", "purelib", "platlib")}
    return tuple(str(Path(r).resolve()) for r in roots if r)


def _location_pattern(installed: tuple[str, ...]) -> re.Pattern[str]:
    """The directories code is found under (the environment, the interpreter's prefixes, the
    import path, the working directory), as written and resolved, longest first: where a
    checkout or a virtual environment lies says nothing about what its code does."""
    found = {*installed, sys.prefix, sys.exec_prefix, sys.base_prefix, os.getcwd()}
    found.update(p for p in sys.path if os.path.isabs(p))
    found.update(sysconfig.get_paths().values())
    roots = {str(Path(p)) for p in found} | {str(Path(p).resolve()) for p in found}
    roots = {r for r in roots if len(r) > 1}
    alternatives = "|".join(re.escape(r) for r in sorted(roots, key=len, reverse=True))
    return re.compile(f"(?:{alternatives})(?![\\w.-])")


class _Origins:
    """Where a module's code comes from: walked (the framework), the user's, or installed."""

    def __init__(self, scope: CodeScope) -> None:
        self.scope = scope
        self._installed = _installed_roots()
        self._locations = _location_pattern(self._installed)
        self._users: dict[str, bool] = {}

    def unlocated(self, text: str) -> str:
        """``text`` with the directories code lies under written as ``<path>``: JAX keeps a
        jitted function's place (``negative at /venv/.../ufuncs.py:191``) in its wrapper, and
        a second checkout or virtual environment missed every entry its twin stored."""
        return self._locations.sub("<path>", text) if os.sep in text else text

    def walked(self, module_name: str | None) -> bool:
        return bool(module_name) and self.scope.walks(module_name or "")

    def users(self, module_name: str | None) -> bool:
        """Neither walked nor installed: a ``sitecustomize``, a ``conftest.py``, ``__main__``,
        a patch in a checkout (an editable install included)."""
        if not module_name or self.scope.walks(module_name):
            return False
        found = self._users.get(module_name)
        if found is None:
            module = sys.modules.get(module_name)
            top = module_name.partition(".")[0]
            file = getattr(module, "__file__", None)
            if top in sys.stdlib_module_names or top in sys.builtin_module_names:
                found = False
            elif file is None:
                found = module_name == "__main__" or module is None
            else:
                found = not str(Path(file).resolve()).startswith(self._installed)
            self._users[module_name] = found
        return found

    def keeps_settings(self, module_name: str | None) -> bool:
        """Whether plain values of this module's objects count: a settings package's, or the
        user's."""
        top = (module_name or "").partition(".")[0]
        return top in self.scope.settings or self.users(module_name)


class _Tokens:
    """Tokens of live objects, each computed once per process (memoised by identity; every
    object met is kept alive, so an identity is never reused)."""

    def __init__(
        self, origins: _Origins, separable: type | None, index: dict[str, list[type]]
    ) -> None:
        self.origins = origins
        self.separable = separable
        self.index = index
        self.home = separable.__module__.partition(".")[0] if separable else None
        self._full: dict[int, str] = {}
        self._code: dict[int, str | None] = {}
        self._edges: dict[int, frozenset[type]] = {}
        self._bodies: dict[int, str] = {}
        self._keep: list[Any] = []

    def is_separable(self, cls: Any) -> bool:
        return (
            isinstance(cls, type)
            and self.separable is not None
            and cls is not self.separable
            and _subclass(cls, self.separable)
        )

    # ----- tokens --------------------------------------------------------------------------
    def full(self, obj: Any) -> str:
        """Everything about ``obj`` that can change what code using it does."""
        if isinstance(obj, str):
            return _short(self.origins.unlocated(obj))
        if isinstance(obj, _PLAIN):
            return _short(obj)
        found = self._full.get(id(obj))
        if found is None:
            self._full[id(obj)] = f"cycle:{_short(obj)}"  # met again while being hashed
            self._keep.append(obj)
            found = self._full[id(obj)] = self._full_token(obj)
        return found

    def code(self, obj: Any) -> str | None:
        """The code in ``obj`` and nothing else (None: there is none), for where plain values
        are run-time state."""
        if isinstance(obj, _PLAIN) or _is_array(obj):
            return None
        if isinstance(obj, types.ModuleType):
            return None  # a namespace: walked where it is walked
        if isinstance(obj, _CODE):
            return self.full(obj)
        if id(obj) in self._code:
            return self._code[id(obj)]
        self._code[id(obj)] = None  # met again while being hashed: adds nothing
        self._keep.append(obj)
        found = self._code[id(obj)] = self._code_token(obj)
        return found

    def _full_token(self, obj: Any) -> str:
        if isinstance(obj, types.ModuleType):
            return f"module:{obj.__name__}"
        if isinstance(obj, type):
            return self._class(obj)
        if isinstance(obj, types.FunctionType):
            return self._function(obj)
        if isinstance(obj, _NAMED_CALLABLES):
            owner = getattr(obj, "__objclass__", None) or getattr(obj, "__self__", None)
            return f"builtin:{_short(owner)}.{getattr(obj, '__qualname__', obj)!s}"
        if isinstance(obj, types.CodeType):
            return self._code_object(obj)
        if isinstance(obj, _WRAPPERS):
            return self._wrapper(obj)
        if isinstance(obj, tuple | list):
            items = sorted(obj, key=_short) if _all_classes(obj) else obj
            return _digest(type(obj).__name__, *(self.full(x) for x in items))
        if isinstance(obj, dict | types.MappingProxyType):
            return _digest("map", *self._entries(obj.items(), self.full))
        if isinstance(obj, set | frozenset):
            return _digest("set", *sorted(self.full(x) for x in obj))
        if _is_array(obj):
            return f"array:{_short(obj)}{obj.shape}{obj.dtype}"
        return self._instance(obj, self.origins.keeps_settings(type(obj).__module__)) or (
            f"obj:{_short(obj)}"
        )

    def _code_token(self, obj: Any) -> str | None:
        if isinstance(obj, tuple | list | set | frozenset):
            parts = sorted(t for t in map(self.code, obj) if t is not None)
            return _digest("items", *parts) if parts else None
        if isinstance(obj, dict | types.MappingProxyType):
            parts = self._entries(obj.items(), self.code)
            return _digest("map", *parts) if parts else None
        return self._instance(obj, plain=False)

    def _entries(self, items: Iterable[tuple[Any, Any]], token: Any) -> list[str]:
        """``key=token`` for every entry with a token, sorted by key."""
        out = []
        for key, value in items:
            found = token(value)
            if found is not None:
                name = self.full(key)
                out.append(f"{name}={found}")
        return sorted(out)

    def _class(self, cls: type) -> str:
        name = f"class:{cls.__module__}.{cls.__qualname__}"
        if self.is_separable(cls):
            return name  # its body is in the keys of the bindings that reach it
        if not (self.origins.walked(cls.__module__) or self.origins.users(cls.__module__)):
            return name  # installed elsewhere: versioned, not walked through
        return self.body(cls)

    def body(self, cls: type) -> str:
        """A class's own attributes, each by its token."""
        found = self._bodies.get(id(cls))
        if found is None:
            self._bodies[id(cls)] = f"cycle:{_short(cls)}"
            self._keep.append(cls)
            token = self.full if self.origins.keeps_settings(cls.__module__) else self.code
            found = self._bodies[id(cls)] = _digest(
                f"class:{cls.__module__}.{cls.__qualname__}",
                ",".join(_short(b) for b in cls.__bases__),
                *self._entries(_body(cls), token),
            )
        return found

    def _function(self, fn: types.FunctionType) -> str:
        parts = [
            f"fn:{fn.__module__}.{fn.__qualname__}",
            self.full(fn.__code__),
            self.full(fn.__defaults__),
            self.full(fn.__kwdefaults__),
            self.full(tuple(_cell(c) for c in fn.__closure__ or ())),
            self.full(self._attributes(fn)),
        ]
        if self.origins.users(fn.__module__):
            # Nothing else walks a patch's module: what it names is part of what it is.
            parts.extend(self._entries(self._named(fn), self.full))
        return _digest(*parts)

    def _attributes(self, fn: types.FunctionType) -> dict[str, Any]:
        """A function's attributes; of an installed module's function (the standard library's,
        another package's) only the function it wraps: other packages tag those with their own
        state (importing torch sets ``enum.Enum.__new__._torchscript_modifier``, which made
        every process that had imported torch key its executables apart from those that had
        not)."""
        if self.origins.walked(fn.__module__) or self.origins.users(fn.__module__):
            return fn.__dict__
        return {k: v for k, v in fn.__dict__.items() if k == "__wrapped__"}

    def _named(self, fn: types.FunctionType) -> Iterator[tuple[str, Any]]:
        """The globals ``fn``'s code names, and the attributes it names of the user's modules
        among them."""
        names = set(_code_names(fn.__code__))
        for name in sorted(names):
            if name not in fn.__globals__:
                continue
            value = fn.__globals__[name]
            yield name, value
            if isinstance(value, types.ModuleType) and self.origins.users(value.__name__):
                attributes = vars(value)
                for attribute in sorted(names & attributes.keys()):
                    yield f"{name}.{attribute}", attributes[attribute]

    def _code_object(self, code: types.CodeType) -> str:
        return _digest(
            f"code:{code.co_qualname}:{code.co_argcount},{code.co_posonlyargcount},"
            f"{code.co_kwonlyargcount},{code.co_flags}",
            code.co_code.hex(),
            "|".join(code.co_names),
            "|".join(code.co_varnames + code.co_freevars + code.co_cellvars),
            *(self.full(c) for c in code.co_consts),
        )

    def _wrapper(self, obj: Any) -> str:
        if isinstance(obj, property):
            held: Any = (obj.fget, obj.fset, obj.fdel)
        elif isinstance(obj, functools.partial):
            held = (obj.func, obj.args, obj.keywords)
        elif isinstance(obj, types.MethodType):
            held = (obj.__func__, _short(obj.__self__))
        else:
            held = obj.__func__
        return _digest(f"{type(obj).__name__}", self.full(held))

    def _instance(self, obj: Any, plain: bool) -> str | None:
        """An object by its type and what it holds: for the framework's and the user's types
        their state (its code only, unless ``plain``), for others only a wrapped function;
        None where it holds no code and is not callable (run-time state)."""
        kind = type(obj)
        parts = []
        wrapped = _attribute(obj, "__wrapped__")
        if wrapped is not None:
            parts.append(self.full(wrapped))
        if self.origins.walked(kind.__module__) or self.origins.users(kind.__module__):
            state = _attribute(obj, "__dict__")
            token = self.full if plain else self.code
            if isinstance(state, dict):
                parts.extend(self._entries(state.items(), token))
            slots = [(s, _attribute(obj, s)) for s in _slots(kind)]
            parts.extend(self._entries(slots, token))
        if not parts and not plain and not callable(obj):
            return None
        return _digest(f"obj:{kind.__module__}.{kind.__qualname__}", *parts)

    # ----- what a binding reaches ----------------------------------------------------------
    def edges(self, obj: Any) -> frozenset[type]:
        """The separable classes ``obj`` refers to: directly, by the names its code (and its
        package's helpers' code) uses, through closures, defaults, containers and state."""
        if isinstance(obj, _PLAIN):
            return frozenset()
        if self.is_separable(obj):
            return frozenset([obj])
        found = self._edges.get(id(obj))
        if found is None:
            self._edges[id(obj)] = frozenset()  # met again while being followed
            self._keep.append(obj)
            found = self._edges[id(obj)] = frozenset(self._edges_of(obj))
        return found

    def class_edges(self, cls: type) -> frozenset[type]:
        """What a separable class's own body and its bases refer to (the separable bases
        themselves; the bodies of the others, the base of them all included)."""
        found: set[type] = set()
        for _, value in _body(cls):
            found |= self.edges(value)
        for base in cls.__mro__[1:]:
            found |= self.edges(base) if not self.is_separable(base) else {base}
        return frozenset(found - {cls})

    def _follows(self, module_name: str | None) -> bool:
        top = (module_name or "").partition(".")[0]
        return top == self.home or self.origins.users(module_name)

    def _edges_of(self, obj: Any) -> set[type]:
        found: set[type] = set()
        if isinstance(obj, types.ModuleType):
            if self._follows(obj.__name__):
                for _, value in _module_entries(obj, self.origins):
                    if getattr(value, "__module__", None) == obj.__name__:
                        found |= self.edges(value)
        elif isinstance(obj, type):
            if self._follows(obj.__module__):
                found |= {b for b in obj.__bases__ if self.is_separable(b)}
                for _, value in _body(obj):
                    found |= self.edges(value)
        elif isinstance(obj, types.FunctionType):
            if not self._follows(obj.__module__):
                return found
            names = set(_code_names(obj.__code__))
            for name in names:
                found.update(self.index.get(name, ()))
            held = (obj.__defaults__, obj.__kwdefaults__, obj.__dict__)
            for value in (*held, *(_cell(c) for c in obj.__closure__ or ())):
                found |= self.edges(value)
            for _, value in self._named(obj):
                found |= self.edges(value)
        elif isinstance(obj, _WRAPPERS):
            for value in (
                _attribute(obj, "__func__"),
                _attribute(obj, "fget"),
                _attribute(obj, "fset"),
                _attribute(obj, "func"),
            ):
                if value is not None:
                    found |= self.edges(value)
        elif isinstance(obj, tuple | list | set | frozenset):
            for value in obj:
                found |= self.edges(value)
        elif isinstance(obj, dict | types.MappingProxyType):
            for key, value in obj.items():
                found |= self.edges(key) | self.edges(value)
        elif self._follows(type(obj).__module__):
            state = _attribute(obj, "__dict__")
            if isinstance(state, dict):
                for value in state.values():
                    found |= self.edges(value)
        return found


def _subclass(cls: type, base: type) -> bool:
    try:
        return issubclass(cls, base)
    except TypeError:
        return False


def _all_classes(items: Iterable[Any]) -> bool:
    """Classes gathered by registration (``isinstance`` tuples) come in import order."""
    return all(isinstance(x, type) for x in items)


def _body(cls: type) -> list[tuple[str, Any]]:
    """A class's own attributes, without the data Python and class builders keep in dunder
    names (documentation, ABC caches, a pydantic model's schema, whose references name
    addresses); dunder methods stay."""
    return [
        (k, v)
        for k, v in vars(cls).items()
        if not (k.startswith("__") and k.endswith("__")) or callable(v) or isinstance(v, _WRAPPERS)
    ]


def _code_names(code: types.CodeType) -> Iterator[str]:
    """The global and attribute names ``code`` (and the code nested in it) uses, and its string
    constants that could be names (``getattr(module, "Normal")``)."""
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_names(const)
        elif isinstance(const, str) and const.isidentifier():
            yield const


def _cell(cell: types.CellType) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell (a name not bound yet)
        return "<empty cell>"


def _attribute(obj: Any, name: str) -> Any:
    try:
        return object.__getattribute__(obj, name)
    except Exception:  # a property that raises, a C object without it
        return None


def _slots(kind: type) -> list[str]:
    names: list[str] = []
    for cls in kind.__mro__:
        slots = vars(cls).get("__slots__", ())
        names.extend([slots] if isinstance(slots, str) else list(slots))
    return sorted(n for n in names if n not in ("__dict__", "__weakref__"))


def _is_array(obj: Any) -> bool:
    try:
        shape = getattr(obj, "shape", None)
    except Exception:
        return False
    return isinstance(shape, tuple) and hasattr(obj, "dtype") and not isinstance(obj, type)


def _module_entries(module: types.ModuleType, origins: _Origins) -> Iterator[tuple[str, Any]]:
    """A module's attributes, but submodules (walked themselves) and attributes that merely
    name a walked class or function under another name (a loop variable left over, an alias:
    its value can depend on a set's order; the object is walked where it is defined)."""
    for name, value in list(vars(module).items()):
        if name.startswith("__") or isinstance(value, types.ModuleType):
            continue
        if (
            isinstance(value, type | types.FunctionType)
            and getattr(value, "__name__", name) != name
            and origins.walked(value.__module__)
        ):
            continue
        yield name, value


def _import_all(names: Iterable[str]) -> None:
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # not in this release: the walk covers what is there
            continue


def _walked_modules(scope: CodeScope) -> list[types.ModuleType]:
    _import_all(scope.imports)
    found = [
        module
        for name, module in list(sys.modules.items())
        if isinstance(module, types.ModuleType) and scope.walks(name)
    ]
    return sorted(found, key=lambda m: m.__name__)


def _separable_base(scope: CodeScope) -> type | None:
    if scope.separable is None:
        return None
    module, _, name = scope.separable.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _separable_classes(modules: list[types.ModuleType], base: type) -> dict[str, list[type]]:
    """Every separable class defined in a walked module, by its name."""
    index: dict[str, list[type]] = {}
    for module in modules:
        for value in list(vars(module).values()):
            if (
                isinstance(value, type)
                and value.__module__ == module.__name__
                and value is not base
                and _subclass(value, base)
                and value not in index.get(value.__name__, ())
            ):
                index.setdefault(value.__name__, []).append(value)
    return index


class LiveCode:
    """The fingerprints of one scope in this process: one for everything walked, one per set of
    roots (a binding's constructors) for the separable classes they reach."""

    def __init__(self, scope: CodeScope) -> None:
        self.scope = scope
        self._origins = _Origins(scope)
        self._process: str | None = None
        self._tokens: _Tokens | None = None
        self._reach: dict[tuple[int, ...], tuple[tuple[Any, ...], str]] = {}

    def process(self) -> str:
        """Everything the scope walks, as loaded now (taken once, then kept)."""
        if self._process is None:
            modules = _walked_modules(self.scope)
            base = _separable_base(self.scope)
            index = _separable_classes(modules, base) if base is not None else {}
            tokens = self._tokens = _Tokens(self._origins, base, index)
            parts = []
            for module in modules:
                token = (
                    tokens.full if self._origins.keeps_settings(module.__name__) else tokens.code
                )
                entries = tokens._entries(_module_entries(module, self._origins), token)
                parts.append(_digest(f"module:{module.__name__}", *entries))
            self._process = _digest(*parts)
        return self._process

    def reach(self, roots: tuple[Any, ...]) -> str:
        """The separable classes ``roots`` reach, each by its whole body ("" without any)."""
        self.process()
        tokens = self._tokens
        assert tokens is not None
        key = tuple(id(r) for r in roots)
        found = self._reach.get(key)
        if found is None:
            reached: set[type] = set()
            pending: set[type] = set()
            for root in (*roots, *self._common_roots()):
                pending |= tokens.edges(root)
            while pending:
                cls = pending.pop()
                if cls not in reached:
                    reached.add(cls)
                    pending |= tokens.class_edges(cls) - reached
            bodies = sorted(f"{_short(c)}={tokens.body(c)}" for c in reached)
            named = [tokens.full(r) for r in roots]
            found = self._reach[key] = (roots, _digest(*named, *bodies))  # roots kept alive
        return found[1]

    def _common_roots(self) -> list[Any]:
        """What every trace runs besides its binding's constructors: the base class (whose
        methods build wrappers: ``expand``, ``mask``, ``to_event``) and the modules of the
        separable package that the scope imports for its traces (effect handlers, ``scan``)."""
        tokens = self._tokens
        if tokens is None or tokens.separable is None:
            return []
        modules = [
            sys.modules[name]
            for name in self.scope.imports
            if name.partition(".")[0] == tokens.home and name in sys.modules
        ]
        return [tokens.separable, *modules]


#: One per scope per process.
_live: dict[CodeScope, LiveCode] = {}


def live_code(scope: CodeScope) -> LiveCode:
    found = _live.get(scope)
    if found is None:
        found = _live[scope] = LiveCode(scope)
    return found
