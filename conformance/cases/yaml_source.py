"""Safe YAML reading that remembers where every key came from.

PyYAML's ``SafeLoader`` never builds arbitrary objects, but it silently keeps the last of two
duplicate keys and forgets line numbers. Here the document is *composed* into nodes first and
converted by hand: only the YAML core tags are accepted (``!!python/object`` and friends are
rejected by name), duplicate keys are errors, and each mapping key and sequence item keeps its
line so a validation error can point at ``file:line``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

#: libyaml's composer when PyYAML was built with it: ten times faster than the pure-Python one
#: (the suite reads ~200 kB of known failures in every process), the same nodes.
_FAST_LOADER = getattr(yaml, "CSafeLoader", None)

_CORE = "tag:yaml.org,2002:"
_SCALAR_TAGS = {f"{_CORE}{t}" for t in ("str", "int", "float", "bool", "null")}
_SEQ, _MAP = f"{_CORE}seq", f"{_CORE}map"

#: Nesting deeper than this is not a case file; refusing early avoids deep recursion.
MAX_DEPTH = 64
#: Aliases can make a small file expand exponentially ("billion laughs"); cap the nodes visited.
MAX_NODES = 250_000


class YamlError(ValueError):
    """A document that is not acceptable YAML for a case file; carries the 1-based line."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


@dataclass
class Located:
    """A plain Python document plus the line of each path (tuple of keys and indices)."""

    data: Any
    lines: dict[tuple, int] = field(default_factory=dict)

    def line_of(self, path: tuple) -> int | None:
        """The line of ``path``, or of its nearest ancestor that has one."""
        path = tuple(path)
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return self.lines.get(())


class _Constructor(yaml.constructor.SafeConstructor):
    """Only used for scalars: turns a resolved core scalar into int/float/bool/None/str."""


def _scalar(node: yaml.ScalarNode) -> Any:
    if node.tag not in _SCALAR_TAGS:
        raise YamlError(f"YAML tag {node.tag!r} is not allowed in case files", _line(node))
    return _Constructor().construct_object(node, deep=True)


def _line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def _convert(
    node: yaml.Node, path: tuple, lines: dict[tuple, int], depth: int, budget: list[int]
) -> Any:
    if depth > MAX_DEPTH:
        raise YamlError(f"nesting deeper than {MAX_DEPTH} levels", _line(node))
    budget[0] -= 1
    if budget[0] < 0:
        raise YamlError(
            f"document expands to more than {MAX_NODES} nodes (alias bomb?)", _line(node)
        )
    lines.setdefault(path, _line(node))
    if isinstance(node, yaml.ScalarNode):
        return _scalar(node)
    if isinstance(node, yaml.SequenceNode):
        if node.tag != _SEQ:
            raise YamlError(f"YAML tag {node.tag!r} is not allowed in case files", _line(node))
        items = []
        for i, item in enumerate(node.value):
            lines[(*path, i)] = _line(item)
            items.append(_convert(item, (*path, i), lines, depth + 1, budget))
        return items
    if isinstance(node, yaml.MappingNode):
        if node.tag != _MAP:
            raise YamlError(f"YAML tag {node.tag!r} is not allowed in case files", _line(node))
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == f"{_CORE}merge":
                raise YamlError(
                    "YAML merge keys (<<) are not supported in case files", _line(key_node)
                )
            key = _convert(key_node, (*path, "<key>"), {}, depth + 1, budget)
            if not isinstance(key, str | int | float | bool) and key is not None:
                raise YamlError(f"mapping key {key!r} is not a scalar", _line(key_node))
            if key in out:
                raise YamlError(f"duplicate key {key!r}", _line(key_node))
            lines[(*path, key)] = _line(key_node)
            out[key] = _convert(value_node, (*path, key), lines, depth + 1, budget)
        return out
    raise YamlError(f"unsupported YAML node {type(node).__name__}", _line(node))


def load_located(text: str | bytes) -> Located:
    """Parse one YAML document into data plus line numbers, accepting only the core schema."""
    if isinstance(text, bytes):
        raw = text
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = raw.count(b"\n", 0, exc.start) + 1
            raise YamlError(f"file is not UTF-8 ({exc.reason} at byte {exc.start})", line) from None
    try:
        node = _compose(text)
    except yaml.composer.ComposerError as exc:
        raise _from_marked(exc, "more than one YAML document; a case file holds one") from None
    except yaml.MarkedYAMLError as exc:
        raise _from_marked(exc) from None
    except yaml.reader.ReaderError as exc:  # a control character: point at its line
        line = text.count("\n", 0, exc.position) + 1
        code = ord(exc.character) if isinstance(exc.character, str) else int(exc.character)
        raise YamlError(f"character U+{code:04X} is not allowed in YAML", line) from None
    except yaml.YAMLError as exc:
        raise YamlError(f"YAML error: {exc}", None) from None
    except RecursionError:
        raise YamlError(f"nesting deeper than {MAX_DEPTH} levels", None) from None
    if node is None:
        return Located(None, {(): 1})
    lines: dict[tuple, int] = {}
    try:
        data = _convert(node, (), lines, 0, [MAX_NODES])
    except yaml.constructor.ConstructorError as exc:
        raise _from_marked(exc) from None
    except (ValueError, OverflowError) as exc:
        if isinstance(exc, YamlError):
            raise
        raise YamlError(f"bad scalar: {exc}", _line(node)) from None
    return Located(data, lines)


def _compose(text: str) -> yaml.Node | None:
    """The document's node tree, by libyaml where it is safe.

    Both composers recurse (libyaml in C, which crashes the process on ``[`` × 10⁵; PyYAML in
    Python, which hits the recursion limit with no line to report), so the nesting is measured
    first from the parser's event stream, which is iterative and stops at the first level past
    :data:`MAX_DEPTH` with that level's line. A document libyaml rejects (a libyaml built with a
    nesting limit of its own rejects it there) is parsed again by PyYAML, so errors keep
    PyYAML's wording and what it accepts (libyaml refuses a lone-surrogate escape that PyYAML
    reads, which would turn one bad case id into a lost file).
    """
    if _FAST_LOADER is not None:
        try:
            _refuse_deep_nesting(text, _FAST_LOADER)
            return yaml.compose(text, Loader=_FAST_LOADER)
        except yaml.YAMLError:
            pass
    _refuse_deep_nesting(text, yaml.SafeLoader)
    return yaml.compose(text, Loader=yaml.SafeLoader)


def _refuse_deep_nesting(text: str, loader: type) -> None:
    """Raise a located :class:`YamlError` at the first collection nested past MAX_DEPTH."""
    depth = 0
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                line = event.start_mark.line + 1
                raise YamlError(f"nesting deeper than {MAX_DEPTH} levels", line)
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _from_marked(exc: yaml.MarkedYAMLError, prefix: str | None = None) -> YamlError:
    mark = exc.problem_mark or exc.context_mark
    line = mark.line + 1 if mark is not None else None
    problem = exc.problem or str(exc)
    context = f" ({exc.context})" if exc.context else ""
    text = f"{prefix}: " if prefix else "YAML syntax error: "
    return YamlError(f"{text}{problem}{context}", line)
