"""Every kind of case-file error names the file, the line, the case id and what is wrong."""

from __future__ import annotations

import textwrap

import pytest

from conformance.cases.loader import load_case_text
from conformance.cases.validate import Known

GOOD = """\
  - id: good
    family: Normal
    params: {loc: 0.0, scale: 1.0}
    value: 0.5
"""


def load(text: str, known: Known | None = None):
    return load_case_text(text, "cases/x.yaml", known)


def only_error(text: str, known: Known | None = None):
    result = load(text, known)
    assert len(result.errors) == 1, result.errors
    return result, result.errors[0]


@pytest.mark.parametrize(
    ("body", "case_id", "fragment"),
    [
        pytest.param(
            """\
            cases:
              - id: bad
                family: Nromal  #<
                params: {loc: 0.0, scale: 1.0}
                value: 0.5
            """,
            "bad",
            "'Nromal' is no family (did you mean 'Normal'?)",
            id="unknown-family",
        ),
        pytest.param(
            """\
            cases:
              - id: bad
                family: Normal
                params:
                  loc: {generator: gaussian, shape: [2], seed: 0}  #<
                  scale: 1.0
                value: 0.5
            """,
            "bad",
            "'gaussian'",
            id="unknown-generator",
        ),
        pytest.param(
            """\
            cases:
              - id: bad
                family: Normal
                params:  #<
                  loc: 0.0
                value: 0.5
            """,
            "bad",
            "missing parameter 'scale'",
            id="missing-parameter",
        ),
        pytest.param(
            """\
            cases:
              - id: bad
                family: Normal
                params:
                  loc: 0.0
                  scale: 1.0
                  rate: 2.0  #<
                value: 0.5
            """,
            "bad",
            "unexpected parameter 'rate'",
            id="extra-parameter",
        ),
        pytest.param(
            """\
            cases:
              - id: bad
                family: Normal
                params:  #<
                  loc: {generator: normal, shape: [3], seed: 0}
                  scale: {generator: positive, shape: [4], seed: 0}
                value: 0.5
            """,
            "bad",
            "do not broadcast",
            id="params-do-not-broadcast",
        ),
        pytest.param(
            """\
            cases:
              - id: bad
                family: Normal
                params: {loc: [0.0, 1.0], scale: 1.0}
                value: [1.0, 2.0, 3.0]  #<
            """,
            "bad",
            "does not broadcast",
            id="value-does-not-broadcast",
        ),
        pytest.param(
            """\
            cases:
              - id: bad
                family: MultivariateNormal
                parametrization: covariance_matrix
                params:  #<
                  loc: [0.0, 0.0]
                  covariance_matrix: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
                value: [0.0, 0.0]
            """,
            "bad",
            "event size 2",
            id="event-sizes-disagree",
        ),
        pytest.param(
            """\
            cases:
              - id: bad
                family: Normal
                params:
                  loc: "zero"  #<
                  scale: 1.0
                value: 0.5
            """,
            "bad",
            "expected a number",
            id="wrong-type",
        ),
        pytest.param(
            """\
            cases:
              - id: bad
                family: Normal
                params: {loc: 0.0, scale: 1.0}
                value: 0.5
                dtypes: [float16]  #<
            """,
            "bad",
            "dtypes.0",
            id="bad-dtype",
        ),
        pytest.param(
            """\
            cases:
              - id: bad
                family: Normal
                params: {loc: 0.0, scale: 1.0}
                value: 0.5
                colour: blue  #<
            """,
            "bad",
            "colour: unknown key",
            id="unknown-key",
        ),
        pytest.param(
            """\
            cases:
              - id: bad
                family: Normal
                params: {loc: [[0.0, 1.0], [2.0]], scale: 1.0}  #<
                value: 0.5
            """,
            "bad",
            "ragged",
            id="ragged-literal",
        ),
        pytest.param(
            """\
            cases:
              - id: bad
                family: Bernoulli
                parametrization: odds  #<
                params: {probs: 0.3}
                value: 1.0
            """,
            "bad",
            "'odds' is no parametrization of Bernoulli; known: logits, probs",
            id="unknown-parametrization",
        ),
        pytest.param(
            """\
            cases:
              - id: bad
                family: Normal
                params: {loc: 0.0, scale: 1.0}
                value: 0.5
                expect: {batch_shape: [2]}  #<
            """,
            "bad",
            "disagrees with the oracle's ()",
            id="expect-disagrees",
        ),
        pytest.param(
            """\
            cases:
              - id: bad
                family: Normal
                params:
                  loc: {generator: normal, shape: [100000, 100000], seed: 0}  #<
                  scale: 1.0
                value: 0.5
            """,
            "bad",
            "over the cap",
            id="element-cap",
        ),
        pytest.param(
            """\
            cases:
              - id: bad
                family: MultivariateNormal
                parametrization: covariance_matrix
                params:
                  loc: [0.0, 0.0]
                  covariance_matrix: {generator: spd, shape: [2, 3], seed: 0}  #<
                value: [0.0, 0.0]
            """,
            "bad",
            "square shape",
            id="generator-shape",
        ),
        pytest.param(
            """\
            cases:
              - id: bad
                family: Normal
                params: {loc: 0.0, scale: 1.0}
                value: 0.5
                value_dtype: int64  #<
            """,
            "bad",
            "needs a discrete family",
            id="int-value-continuous-family",
        ),
    ],
)
def test_case_error_is_located(body: str, case_id: str, fragment: str) -> None:
    """``#<`` marks the line the error must point at."""
    text = textwrap.dedent(body) + GOOD
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.endswith("#<"))
    result, error = only_error(text)
    assert error.file == "cases/x.yaml"
    assert error.case_id == case_id
    assert error.line == line, str(error)
    assert fragment in error.message, str(error)
    assert f"cases/x.yaml:{line}: case {case_id!r}:" in str(error)
    # The well-formed case in the same file still loads.
    assert [c.id for c in result.cases] == ["good"]


def test_duplicate_id_points_at_second_definition() -> None:
    result, error = only_error("cases:\n" + GOOD + GOOD)
    assert error.line == 6 and error.case_id == "good"
    assert "duplicate case id (first defined at line 2)" in error.message
    assert len(result.cases) == 1


def test_unknown_framework_and_check_names() -> None:
    known = Known(frameworks=frozenset({"torch"}), checks=frozenset({"shapes"}))
    _, error = only_error(
        textwrap.dedent(
            """\
            cases:
              - id: bad
                family: Normal
                params: {loc: 0.0, scale: 1.0}
                value: 0.5
                frameworks: [torch, tensorflow]
            """
        ),
        known,
    )
    assert error.line == 6 and "'tensorflow' is no framework" in error.message


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        pytest.param(
            "cases:\n  - id: a\n    family: [Normal\n", 4, "YAML syntax error", id="syntax"
        ),
        pytest.param(
            "cases:\n  - !!python/object/apply:os.system ['true']\n",
            2,
            "tag 'tag:yaml.org,2002:python/object/apply:os.system' is not allowed",
            id="python-tag",
        ),
        pytest.param("cases: []\ncases: []\n", 2, "duplicate key 'cases'", id="duplicate-key"),
        pytest.param("- id: a\n", 1, "is a mapping with a 'cases:' list", id="top-level-list"),
        pytest.param("", 1, "this is empty", id="empty"),
        pytest.param(
            "cases: {id: a}\n", 1, "cases: Input should be a valid list", id="cases-not-list"
        ),
        pytest.param("format: 2\ncases: []\n", 1, "format", id="format-version"),
        pytest.param(
            "cases: []\n---\ncases: []\n", 2, "more than one YAML document", id="two-docs"
        ),
    ],
)
def test_file_level_errors(text: str, line: int, fragment: str) -> None:
    result = load_case_text(text, "cases/x.yaml")
    assert result.cases == []
    assert len(result.errors) == 1, result.errors
    error = result.errors[0]
    assert error.line == line, str(error)
    assert fragment in str(error), str(error)
    assert str(error).startswith(f"cases/x.yaml:{line}:")


def test_non_utf8_file() -> None:
    result = load_case_text(b"cases:\n  - id: \xff\xfe\n", "cases/x.yaml")
    assert "not UTF-8" in str(result.errors[0])


def test_alias_bomb_is_refused_without_expanding() -> None:
    lines = ["a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"]
    for i in range(1, 12):
        prev = f"*a{i - 1}"
        lines.append(f"a{i}: &a{i} [{', '.join([prev] * 10)}]")
    lines.append("cases: []")
    result = load_case_text("\n".join(lines) + "\n", "cases/bomb.yaml")
    assert "alias bomb" in str(result.errors[0])


def test_defaults_apply_and_errors_point_at_defaults() -> None:
    template = textwrap.dedent(
        """\
        defaults:
          dtypes: [{dtype}]
        cases:
          - id: a
            family: Normal
            params: {{loc: 0.0, scale: 1.0}}
            value: 0.5
        """
    )
    result = load(template.format(dtype="float64"))
    assert result.cases[0].spec.dtypes == ["float64"]
    bad = load(template.format(dtype="float8"))
    assert bad.errors[0].line == 2 and bad.errors[0].case_id == "a"


def test_case_source_is_kept_for_reports() -> None:
    result = load("cases:\n" + GOOD)
    assert result.cases[0].source.startswith("  - id: good\n")
    assert "value: 0.5" in result.cases[0].source


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        ("grad_wrt: [rat]", "grad_wrt 'rat' is no input (did you mean 'rate'?)"),
        ("grad_wrt: []", "grad_wrt"),
        ("grad_wrt: [rate, rate]", "lists an entry twice"),
    ],
)
def test_grad_wrt_names_differentiable_inputs(extra: str, fragment: str) -> None:
    text = f"""\
cases:
  - id: g
    family: Gamma
    params: {{concentration: 1.0, rate: 2.0}}
    value: 0.5
    {extra}
"""
    _, error = only_error(text)
    assert error.case_id == "g" and fragment in error.message, error.message
    assert error.line == 6  # the grad_wrt line itself


@pytest.mark.parametrize(
    ("case", "fragment"),
    [
        (
            "family: Binomial\n    params: {total_count: 5, probs: 0.3}\n    value: 2\n"
            "    param_dtypes: {total_count: int64}\n    grad_wrt: [probs, total_count]",
            "grad_wrt names 'total_count', which is",
        ),
        (
            "family: Poisson\n    params: {rate: 2.0}\n    value: 1\n    grad_wrt: [value]",
            "grad_wrt names 'value', which is discrete",
        ),
        (
            "family: LKJCholesky\n    params: {dimension: 3, concentration: 1.5}\n"
            "    value: {sample: {seed: 1}}\n    grad_wrt: [dimension]",
            "grad_wrt names 'dimension', which is static",
        ),
    ],
)
def test_grad_wrt_refuses_what_cannot_be_differentiated(case: str, fragment: str) -> None:
    _, error = only_error(f"cases:\n  - id: g\n    {case}\n")
    assert fragment in error.message, error.message


def test_grad_wrt_of_a_good_case_loads() -> None:
    result = load("cases:\n" + GOOD.replace("value: 0.5", "value: 0.5\n    grad_wrt: [scale]"))
    assert not result.errors and result.cases[0].differentiable_inputs == ("scale",)


@pytest.mark.parametrize(
    ("kl", "line", "fragment"),
    [
        ("{family: Poisson, params: {rate: 2.0}}", 5, "the oracle has no KL(Normal ‖ Poisson)"),
        ("{family: Normal, params: {loc: 1.0, sigma: 0.7}}", 5, "unexpected parameter 'sigma'"),
        (
            "{family: Normal, params: {loc: [1.0, 2.0, 3.0, 4.0], scale: 1.0}}",
            5,
            "q's batch shape (4,) does not broadcast against p's (3,)",
        ),
    ],
)
def test_a_kl_case_error_names_the_line_and_the_pair(kl: str, line: int, fragment: str) -> None:
    text = f"""\
cases:
  - id: k
    family: Normal
    params: {{loc: [0.0, 1.0, 2.0], scale: 1.0}}
    kl: {kl}
"""
    result = load(text + GOOD)
    assert [c.id for c in result.cases] == ["good"]
    (error,) = result.errors
    assert error.case_id == "k" and error.line == line, error
    assert fragment in error.message, error.message


def test_a_kl_case_loads_q_as_a_case_without_a_value() -> None:
    text = """\
cases:
  - id: k
    family: Normal
    params: {loc: [[0.0], [1.0]], scale: 1.0}
    kl: {family: Gamma, params: {concentration: [2.0, 3.0, 4.0], rate: 1.0}}
"""
    (case,) = load(text).cases
    assert case.kl_q is not None and case.kl_q.family == "Gamma"
    assert case.kl_q.parametrization == "concentration_rate"
    assert case.kl_shape == (2, 3)
