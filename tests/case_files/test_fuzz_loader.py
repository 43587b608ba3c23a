"""Fuzzing the case loader: no document crashes it, and every rejection is a located CaseError.

Three sources of documents: structured random case files (hypothesis objects dumped as YAML),
byte-level mutations of the shipped case files, and data-level mutations of their cases
(hostile values put at random paths). Each document must load without an exception; every
error must name the file and a line inside it, and the case's id wherever the case has one;
every accepted case must build its arrays or fail with a ``CaseInputError`` — and never hang.

``CONFORMANCE_FUZZ_EXAMPLES`` sets the documents per test (default 300: three tests, about
900 documents in CI); ``CONFORMANCE_FUZZ_SEED`` the hypothesis seed (default 0, so CI sees the
same documents every run and is never red by chance). A long run::

    CONFORMANCE_FUZZ_EXAMPLES=3400 CONFORMANCE_FUZZ_SEED=$RANDOM pytest tests/case_files/test_fuzz_loader.py -s
"""

from __future__ import annotations

import copy
import math
import os
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import yaml
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from conformance import reference
from conformance.cases import yaml_source
from conformance.cases.case_model import CaseFile
from conformance.cases.generators import GENERATORS
from conformance.cases.loader import Case, CaseError, LoadedFile, load_case_text, shown_id
from conformance.cases.validate import Known
from conformance.cases.yaml_source import YamlError, load_located
from conformance.checks import CHECKS
from conformance.expect.materialize import CaseInputError, float64_inputs

REPO = Path(__file__).resolve().parents[2]
NAME = "cases/fuzz.yaml"
EXAMPLES = int(os.environ.get("CONFORMANCE_FUZZ_EXAMPLES") or 300)
SEED = int(os.environ.get("CONFORMANCE_FUZZ_SEED") or 0)
#: Small, so accepted cases can be materialised quickly; the cap itself is under test too.
FUZZ_MAX_ELEMENTS = 4096
KNOWN = Known(
    frameworks=frozenset({"torch", "numpyro", "gpytorch"}),
    checks=frozenset(CHECKS),
    max_elements=FUZZ_MAX_ELEMENTS,
)
FAMILIES = {name: reference.get_family(name) for name in reference.family_names()}
REAL_FILES = {p.name: p.read_bytes() for p in sorted((REPO / "cases").glob("*.yaml"))}

STATS: Counter = Counter()

FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)

HOSTILE_STRINGS = [
    "</script><img src=x onerror=alert(1)>",
    '"""',
    "\\",
    "\\x",
    "a::b[c]",
    "../../etc/passwd",
    "\x00",
    "\ud800",
    "\u2028",
    "é" * 130,
    "",
    " ",
    "nan",
    "1e400",
]
HOSTILE_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.sampled_from([2**63, -(2**63) - 1, 10**400, -1, 0, 100_000, 10**9]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(HOSTILE_STRINGS),
    st.text(max_size=12),
)


def one_in(n: int) -> st.SearchStrategy[bool]:
    """True about once in ``n`` draws (hypothesis leans integers to 0, so 0 is "no")."""
    return st.integers(0, n - 1).map(lambda i: i == n - 1)


DIMS = st.one_of(st.integers(0, 4), st.sampled_from([-1, 0, 1, 100_000, 10**9, 2**64]))
SHAPES = st.lists(DIMS, max_size=4) | st.lists(st.integers(0, 1), min_size=15, max_size=40)


def _nested(depth: int) -> st.SearchStrategy:
    leaf = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 5))
    return st.recursive(leaf, lambda inner: st.lists(inner, max_size=3), max_leaves=depth)


LITERALS = st.one_of(
    _nested(12),
    st.integers(1, 70).map(lambda d: [[[0.5]]] if d < 3 else _deep_list(d)),
    st.sampled_from([10**400, -(10**400), float("nan"), float("inf"), [1.0, [2.0]], [[], []]]),
)


def _deep_list(depth: int) -> Any:
    out: Any = 1.0
    for _ in range(depth):
        out = [out]
    return out


def _generator() -> st.SearchStrategy:
    """A generator spec: a known or unknown generator, hostile shapes, seeds and options."""
    number = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-3, 10**20))
    return st.fixed_dictionaries(
        {
            "generator": st.sampled_from([*GENERATORS, "gaussian", 3]),
            "shape": SHAPES | HOSTILE_SCALARS,
            "seed": st.one_of(st.integers(-2, 10**40), HOSTILE_SCALARS),
        },
        optional={
            k: number | HOSTILE_SCALARS
            for k in ("loc", "scale", "low", "high", "concentration", "min_eigenvalue")
        }
        | {
            "blocks": st.sampled_from([0, 1, 2, 3, 10**9]),
            "kronecker": st.lists(st.integers(-1, 4), max_size=3),
            "diagonal": st.booleans() | HOSTILE_SCALARS,
            "bogus": HOSTILE_SCALARS,
        },
    )


ARRAYS = st.one_of(LITERALS, _generator(), HOSTILE_SCALARS, st.floats(-3, 3))
SAMPLES = st.fixed_dictionaries(
    {"sample": st.fixed_dictionaries({"seed": st.integers(0, 10**20) | HOSTILE_SCALARS})}
).flatmap(
    lambda d: st.sampled_from(["sample_shape", "shape", None]).map(
        lambda key: {"sample": {**d["sample"], key: [2, 1]}} if key else d
    )
)


#: A generator that fits each parameter domain, so that plausible cases often load.
DOMAIN_GENERATORS = {
    "positive": "positive",
    "nonnegative": "positive",
    "unit_interval": "probability",
    "open_unit_interval": "probability",
    "half_open:0,1": "probability",
    "simplex": "simplex",
    "positive_definite": "spd",
    "lower_cholesky": "cholesky",
    "nonnegative_integer": "integers",
    "positive_integer": "integers",
}


@st.composite
def plausible_array(draw: st.DrawFn, info: Any, batch: list[int], n: int) -> Any:
    """A parameter that fits its domain and event rank — then, now and again, one that does not."""
    if draw(one_in(8)):
        return draw(ARRAYS)
    if info.static:
        return draw(st.integers(2, 4) | st.sampled_from([0, 1, -1, 10**6, 1.5]))
    shape = [*draw(st.sampled_from([[], batch, [1] * len(batch)])), *[n] * info.event_rank]
    if not shape and draw(st.booleans()):
        return {"positive": 1.5, "real": -0.5}.get(info.domain, 0.5)
    return {
        "generator": DOMAIN_GENERATORS.get(info.domain, "normal"),
        "shape": shape,
        "seed": draw(st.integers(0, 2**32)),
    }


@st.composite
def cases(draw: st.DrawFn) -> Any:
    """A case of a real family with its parameter names and plausible, often wrong, contents."""
    name = draw(st.sampled_from(sorted(FAMILIES)))
    family = FAMILIES[name]
    parametrization = draw(st.sampled_from(sorted(family.parametrizations)))
    info = family.parametrizations[parametrization]
    names = list(info)
    if draw(one_in(10)):
        names = draw(st.lists(st.sampled_from([*names, "bogus"]), max_size=4))
    batch = draw(st.lists(st.integers(1, 3), max_size=2))
    n = draw(st.integers(1, 3))
    case: dict[Any, Any] = {
        "id": draw(st.from_regex(r"\A[a-z][a-z0-9-]{0,8}\Z", fullmatch=True)),
        "family": draw(HOSTILE_SCALARS) if draw(one_in(10)) else name,
        "parametrization": parametrization,
        "params": {
            k: draw(plausible_array(info[k], batch, n)) if k in info else draw(ARRAYS)
            for k in names
        },
        "value": draw(st.one_of(SAMPLES, SAMPLES, ARRAYS)),
    }
    optional = {
        "parametrization": HOSTILE_SCALARS,
        "id": HOSTILE_SCALARS,
        "value_dtype": st.sampled_from(["float", "int32", "int64", "bool", "int8"]),
        "dtypes": st.lists(st.sampled_from(["float32", "float64", "float16"]), max_size=3),
        "frameworks": st.lists(st.sampled_from(["torch", "numpyro", "tensorflow"]), max_size=3),
        "checks": st.lists(st.sampled_from([*map(str, CHECKS), "nope"]), max_size=3),  # YAML: str
        "expect": st.fixed_dictionaries({}, optional={"batch_shape": SHAPES}),
        "param_dtypes": st.dictionaries(
            st.sampled_from(names or ["x"]), st.sampled_from(["int32", "float", "x"])
        ),
        "bogus": HOSTILE_SCALARS,
    }
    if draw(st.booleans()):  # half the cases stay plausible, the others get hostile extras
        for key, strategy in optional.items():
            if draw(one_in(4)):
                case[key] = draw(strategy)
        for key in draw(st.lists(st.sampled_from(list(case)), max_size=2)):
            case.pop(key, None)  # missing keys
    return case


@st.composite
def documents(draw: st.DrawFn) -> Any:
    doc: dict[Any, Any] = {
        "cases": draw(st.lists(st.one_of(cases(), cases(), HOSTILE_SCALARS), max_size=4))
    }
    if draw(one_in(4)):
        doc["defaults"] = draw(st.one_of(st.just({"dtypes": ["float64"]}), HOSTILE_SCALARS))
    if draw(one_in(6)):
        doc["format"] = draw(st.sampled_from([1, 2]) | HOSTILE_SCALARS)
    if draw(one_in(10)):
        doc[draw(HOSTILE_SCALARS)] = draw(HOSTILE_SCALARS)
    if draw(one_in(10)) and doc["cases"]:
        doc["cases"].append(doc["cases"][0])  # a duplicate id
    if draw(one_in(5)):  # not a mapping at the top
        return draw(st.one_of(HOSTILE_SCALARS, st.lists(cases(), max_size=2)))
    return doc


def _dump(doc: Any, flow: bool, unicode: bool) -> bytes:
    text = yaml.safe_dump(doc, default_flow_style=flow, allow_unicode=unicode, sort_keys=False)
    return text.encode("utf-8", "surrogatepass")


# ----- mutations of the shipped files -------------------------------------------------------
HOSTILE_TOKENS = [
    b".nan",
    b"-.inf",
    b"1.0e400",
    b"-1",
    b"[100000, 100000]",
    b"[-1, 2]",
    b"99999999999999999999999999",
    b"1" * 5000,
    b"!!python/object/apply:os.system ['echo pwned']",
    b"!!python/name:os.system",
    b"!!binary aGk=",
    b"!!set {a, b}",
    b"2001-12-14",
    b"*nope",
    b"&anchor 1",
    b"{",
    b"[",
    b"'",
    b"[" * 80 + b"1" + b"]" * 80,
    b"{a: {b: {c: {d: {e: {f: [[[[[[[[[[[[[[[[[[1.0]]]]]]]]]]]]]]]]]]}}}}}}",
    b"~",
    b"yes",
    b"0x1F",
    b"0o17",
    b"1_000",
    b'"\\ud800"',
    b'"</script><img src=x onerror=alert(1)>"',
    b'\'"""\'',
    b'"\\\\"',
    b"\xff\xfe",
    b"\x00",
    b"\t",
    b"<<: *nope",
    b"? [a, b]\n  : 1",
    b"--- \n...",
    b"%YAML 1.1",
]
SCALAR = re.compile(rb"(:\s+|-\s+|\[|,\s*)([^\s,\[\]{}#][^,\[\]{}#\n]*)")


MUTATIONS = [
    *["token"] * 3,
    *("delete", "duplicate", "swap", "indent", "bytes", "truncate", "case-twice", "line"),
]


@st.composite
def mutated_files(draw: st.DrawFn) -> bytes:
    lines = REAL_FILES[draw(st.sampled_from(sorted(REAL_FILES)))].split(b"\n")
    # A window of 1-3 cases after the file's header and defaults keeps documents small.
    starts = [k for k, ln in enumerate(lines) if ln.startswith(b"  - id:")]
    first = draw(st.integers(0, len(starts) - 1))
    end = starts[first + 3] if first + 3 < len(starts) else len(lines)
    lines = lines[: starts[0]] + lines[starts[first] : draw(st.integers(starts[first] + 1, end))]
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(MUTATIONS))
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        if op == "token":
            matches = list(SCALAR.finditer(lines[i]))
            if matches:
                m = draw(st.sampled_from(matches))
                token = draw(st.sampled_from(HOSTILE_TOKENS))
                lines[i] = lines[i][: m.start(2)] + token + lines[i][m.end(2) :]
        elif op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])  # a duplicate key, or a case id twice
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "indent":
            lines[i] = b" " * draw(st.integers(1, 3)) + lines[i]
        elif op == "bytes":
            junk = draw(st.binary(min_size=1, max_size=4))
            at = draw(st.integers(0, len(lines[i])))
            lines[i] = lines[i][:at] + junk + lines[i][at:]
        elif op == "truncate":
            lines = lines[: i + 1]
            lines[-1] = lines[-1][: draw(st.integers(0, len(lines[-1])))]
        elif op == "case-twice":
            starts = [k for k, ln in enumerate(lines) if ln.lstrip().startswith(b"- id:")]
            if starts:
                k = draw(st.sampled_from(starts))
                end = next((s for s in starts if s > k), len(lines))
                lines[end:end] = lines[k:end]
        elif op == "line":
            indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
            key = draw(st.sampled_from([b"id", b"family", b"value", b"params", b"bogus"]))
            lines.insert(i, indent + key + b": " + draw(st.sampled_from(HOSTILE_TOKENS)))
    return b"\n".join(lines)


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*prefix, i))
    return out


@st.composite
def mutated_data(draw: st.DrawFn) -> bytes:
    """A shipped file parsed, 1-3 of its cases kept, hostile values put at random paths."""
    data = yaml.safe_load(REAL_FILES[draw(st.sampled_from(sorted(REAL_FILES)))])
    start = draw(st.integers(0, len(data["cases"]) - 1))
    data["cases"] = data["cases"][start : start + draw(st.integers(1, 3))]
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(data["cases"])[1:]))
        parent = data["cases"]
        for part in path[:-1]:
            parent = parent[part]
        action = draw(st.sampled_from(["replace", "replace", "delete", "shape", "nest"]))
        if action == "delete" and isinstance(parent, dict):
            del parent[path[-1]]
        elif action == "shape":
            parent[path[-1]] = {
                "generator": "normal",
                "shape": draw(st.sampled_from([[100000, 100000], [-1], [2**40], [1] * 40])),
                "seed": 1,
            }
        elif action == "nest":
            parent[path[-1]] = _deep_list(draw(st.integers(10, 70)))
        else:  # a copy: a drawn value may be a shared constant of a strategy
            parent[path[-1]] = copy.deepcopy(draw(st.one_of(HOSTILE_SCALARS, ARRAYS)))
    return _dump(data, draw(st.booleans()), draw(st.booleans()))


# ----- the properties -----------------------------------------------------------------------
def _case_ids(raw: bytes) -> list[str] | None:
    """The string ids of the document's cases, or None where the file as a whole is rejected."""
    try:
        doc = load_located(raw)
    except YamlError:
        return None
    if not isinstance(doc.data, dict):
        return None
    try:
        top = CaseFile.model_validate(doc.data)
    except Exception:
        return None
    return [c["id"] for c in top.cases if isinstance(c, dict) and isinstance(c.get("id"), str)]


def check_document(raw: bytes) -> LoadedFile:
    """Load ``raw`` and assert everything the loader promises about it."""
    STATS["documents"] += 1
    loaded = load_case_text(raw, NAME, KNOWN)  # must not raise, whatever raw holds
    last_line = raw.count(b"\n") + 1
    for error in loaded.errors:
        assert isinstance(error, CaseError)
        assert error.file == NAME
        assert isinstance(error.line, int) and 1 <= error.line <= last_line, error
        assert str(error).startswith(f"{NAME}:{error.line}: "), str(error)
        assert error.message.strip(), error
        str(error).encode("utf-8")  # printable: no lone surrogate reaches a report
    ids = _case_ids(raw)
    if ids is not None:
        loaded_ids = [c.id for c in loaded.cases]
        named = {e.case_id for e in loaded.errors}
        for case_id in ids:
            # Every case with an id is either loaded or named by an error of its own.
            assert case_id in loaded_ids or shown_id(case_id) in named, (case_id, loaded.errors)
    for case in loaded.cases:
        _check_accepted(case)
    STATS["rejected"] += bool(loaded.errors)
    STATS["errors"] += len(loaded.errors)
    STATS["accepted_cases"] += len(loaded.cases)
    return loaded


def _check_accepted(case: Case) -> None:
    assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", case.id)
    assert math.prod(case.batch_shape) <= FUZZ_MAX_ELEMENTS
    started = time.monotonic()
    try:
        params, value = float64_inputs(case)
    except CaseInputError:
        STATS["input_errors"] += 1
        return
    finally:
        float64_inputs.cache_clear()
        assert time.monotonic() - started < 10, f"building {case.id} took too long"
    for array in (*params.values(), value):
        assert array.size <= FUZZ_MAX_ELEMENTS, (case.id, array.shape)


@pytest.fixture(scope="module", autouse=True)
def _report_stats():
    started = time.monotonic()
    yield
    print(
        f"\nfuzzed {STATS['documents']} documents in {time.monotonic() - started:.1f} s: "
        f"{STATS['rejected']} rejected ({STATS['errors']} errors), "
        f"{STATS['accepted_cases']} cases accepted ({STATS['input_errors']} failed to build)"
    )


@FUZZ
@seed(SEED)
@given(documents(), st.booleans(), st.booleans())
def test_structured_documents(doc: Any, flow: bool, unicode: bool) -> None:
    check_document(_dump(doc, flow, unicode))


@FUZZ
@seed(SEED + 1)
@given(mutated_files())
def test_mutated_case_files(raw: bytes) -> None:
    check_document(raw)


@FUZZ
@seed(SEED + 2)
@given(mutated_data())
def test_mutated_cases(raw: bytes) -> None:
    check_document(raw)


# ----- the hostile inputs the issue names, each pinned -------------------------------------
class _RefusingLoader(yaml.SafeLoader):
    """Stands in for a libyaml that refuses every document, to drive the fallback path."""

    def __init__(self, stream: Any) -> None:
        raise yaml.YAMLError("refused by this libyaml")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("cases:\n  - !!python/object/apply:os.system ['touch pwned']\n", "is not allowed"),
        ("cases:\n  - id: a\n    family: !!python/name:os.system\n", "is not allowed"),
        (b"cases:\n  - id: a\n    family: \xff\n", "not UTF-8"),
        ("cases:\n  - id: a\x00\n", "U+0000 is not allowed"),
        ("cases: " + "[" * 100 + "]" * 100 + "\n", "nesting deeper"),
        # Unclosed and deep enough to crash libyaml's (recursive, C) composer: refused first.
        ("cases: " + "[" * 200_000 + "\n", "nesting deeper"),
        ("cases:\n  - id: big\n    value: " + "9" * 5000 + "\n", "bad scalar"),
    ],
    ids=["python-object", "python-name", "non-utf8", "nul", "deep", "deep-unclosed", "long-int"],
)
@pytest.mark.parametrize("composer", ["libyaml", "pyyaml", "libyaml-refuses"])
def test_hostile_file_is_one_located_error(
    text: str | bytes, fragment: str, composer: str, tmp_path
) -> None:
    """Each hostile file is one located error whichever YAML composer the machine has.

    ``pyyaml``: PyYAML built without libyaml. ``libyaml-refuses``: a libyaml that rejects the
    document itself (a libyaml with a nesting limit of its own stops ``[`` × 2·10⁵ there), so the
    pure-Python composer takes over; both once lost the line of a too-deep document.
    """
    fast = {"libyaml": yaml_source._FAST_LOADER, "pyyaml": None, "libyaml-refuses": _RefusingLoader}
    with mock.patch.object(yaml_source, "_FAST_LOADER", fast[composer]):
        loaded = check_document(text if isinstance(text, bytes) else text.encode())
    assert loaded.cases == [] and len(loaded.errors) == 1
    assert fragment in loaded.errors[0].message
    assert not (tmp_path / "pwned").exists() and not Path("pwned").exists()


NORMAL = (
    "  - id: {id}\n    family: Normal\n    params: {{loc: {loc}, scale: 1.0}}\n    value: 0.5\n"
)


@pytest.mark.parametrize(
    ("loc", "fragment"),
    [
        ("[[[[[[[[[[[[[[[[[[[[1.0]]]]]]]]]]]]]]]]]]]]", "more than 16 dims"),
        ("1" + "0" * 400, "beyond float64's range"),
        ("{generator: normal, shape: [-1], seed: 0}", "greater than or equal to 0"),
        ("{generator: normal, shape: [" + ", ".join(["1"] * 17) + "], seed: 0}", "at most 16"),
    ],
    ids=["deep-literal", "huge-int", "negative-shape", "rank-17"],
)
def test_bad_arrays_are_located_case_errors(loc: str, fragment: str) -> None:
    text = "cases:\n" + NORMAL.format(id="good", loc="0.0") + NORMAL.format(id="bad", loc=loc)
    loaded = check_document(text.encode())
    assert [c.id for c in loaded.cases] == ["good"]
    assert [e.case_id for e in loaded.errors] == ["bad"]
    assert loaded.errors[0].line == 8 and fragment in loaded.errors[0].message, loaded.errors


def test_a_case_that_is_not_a_mapping_does_not_hide_the_others() -> None:
    text = "cases:\n  - just a string\n" + NORMAL.format(id="good", loc="0.0")
    loaded = check_document(text.encode())
    assert [c.id for c in loaded.cases] == ["good"]
    assert len(loaded.errors) == 1 and loaded.errors[0].line == 2
    assert "a case is a mapping" in loaded.errors[0].message


def test_a_missing_key_points_at_its_case_not_line_one() -> None:
    text = "cases:\n" + NORMAL.format(id="good", loc="0.0") + "  - id: nofamily\n    value: 1.0\n"
    loaded = check_document(text.encode())
    lines = {e.line for e in loaded.errors}
    assert lines == {6} and {e.case_id for e in loaded.errors} == {"nofamily"}, loaded.errors


def test_an_unprintable_id_is_shown_escaped_and_never_reaches_a_nodeid() -> None:
    text = 'cases:\n  - id: "a\\nb::c[d]\\ud800"\n    family: Normal\n'
    loaded = check_document(text.encode())
    assert {e.case_id for e in loaded.errors} == {"a\\nb::c[d]\\ud800"}


def test_lkj_dimension_counts_against_the_element_cap() -> None:
    text = (
        "cases:\n  - id: huge-lkj\n    family: LKJCholesky\n"
        "    params: {dimension: 100000, concentration: 0.7}\n    value: {sample: {seed: 1}}\n"
    )
    loaded = check_document(text.encode())
    assert "over the cap" in loaded.errors[0].message, loaded.errors


def test_spd_blocks_are_checked_before_the_generator_loops() -> None:
    text = (
        "cases:\n  - id: blocks\n    family: MultivariateNormal\n    params:\n"
        "      loc: {generator: normal, shape: [0], seed: 1}\n"
        "      covariance_matrix: {generator: spd, shape: [0, 0], seed: 1, blocks: 1000000000}\n"
        "    value: {sample: {seed: 1}}\n"
    )
    loaded = check_document(text.encode())
    assert "blocks do not divide" in loaded.errors[0].message, loaded.errors


def test_libyaml_and_pure_python_read_every_bundled_file_alike() -> None:
    """The fast (libyaml) composer must give the same data and lines as PyYAML's own."""
    from conformance.known_failures import entries as known_failures

    assert yaml_source._FAST_LOADER is not None, "PyYAML without libyaml: the fast path is off"
    cases = Path(__file__).resolve().parents[2] / "cases"
    files = [*sorted(cases.glob("*.yaml")), *known_failures.builtin_files()]
    assert len(files) > 40
    for path in files:
        fast = load_located(path.read_bytes())
        with mock.patch.object(yaml_source, "_FAST_LOADER", None):
            slow = load_located(path.read_bytes())
        assert fast.data == slow.data, path
        assert fast.lines == slow.lines, path
