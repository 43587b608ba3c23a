"""The pytest plugin end to end: ids, selection, outcomes, results.json, xdist, broken files."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from conformance.plan.shards import shard_of

GOOD = """\
cases:
  - id: batched-cov
    family: MultivariateNormal
    parametrization: covariance_matrix
    params:
      loc: {generator: normal, shape: [3], seed: 1}
      covariance_matrix: {generator: spd, shape: [2, 3, 3], seed: 2}
    value: {sample: {seed: 3, sample_shape: [4]}}
  - id: scalar
    family: Normal
    params: {loc: 0.0, scale: 1.0}
    value: 0.5
"""

BROKEN = """\
cases:
  - id: fine
    family: Bernoulli
    params: {probs: 0.25}
    value: 1.0
  - id: typo
    family: Bernouli
    params: {probs: 0.25}
    value: 1.0
"""


def nodeids(data: dict) -> list[str]:
    return [r["nodeid"] for r in data["records"]]


def test_item_ids_and_results_records(case_dir, run_suite) -> None:
    cases = case_dir({"mvn.yaml": GOOD})
    result, data = run_suite(cases, "--framework", "torch,numpyro")
    result.assert_outcomes(passed=16)
    ids = nodeids(data)
    assert "cases/mvn.yaml::batched-cov[torch-float32-log_prob]" in ids
    assert "cases/mvn.yaml::scalar[numpyro-float64-shapes]" in ids
    assert len(ids) == len(set(ids)) == data["run"]["collected"] == 16
    rec = next(
        r for r in data["records"] if r["nodeid"].endswith("batched-cov[numpyro-float32-log_prob]")
    )
    assert rec["case"] == "batched-cov" and rec["family"] == "MultivariateNormal"
    assert rec["framework"] == "numpyro" and rec["dtype"] == "float32" and rec["device"] == "cpu"
    assert rec["check"] == "log_prob" and rec["outcome"] == "passed"
    assert rec["framework_version"] == data["run"]["frameworks"]["numpyro"]
    assert rec["metrics"]["compared"] == 8 and rec["metrics"]["max_err_over_tol"] < 1
    run = data["run"]
    for key in (
        "frameworks",
        "python",
        "platform",
        "device",
        "started",
        "duration",
        "command",
        "counts",
    ):
        assert key in run
    assert run["counts"]["passed"] == 16


def test_a_users_case_file_gets_generated_edge_items_by_default(case_dir, run_suite) -> None:
    """The edge cases are generated from any case file, not only the shipped ones: the
    Normal anchor ``scalar`` gives ``edge-scale-tiny`` and the others, each at its anchor's
    line; ``--edges=off`` leaves them out."""
    cases = case_dir({"mvn.yaml": GOOD})
    _, on = run_suite(cases, "--framework", "torch", "--edges=on")
    _, off = run_suite(cases, "--framework", "torch", "--edges=off")
    edge_ids = [n for n in nodeids(on) if "::edge-" in n]
    assert "cases/mvn.yaml::edge-scale-tiny[torch-float64-log_prob]" in edge_ids
    assert sorted(set(nodeids(on)) - set(edge_ids)) == sorted(nodeids(off))
    # the MultivariateNormal case is batched (covariance (2, 3, 3)): it is no anchor
    assert not [n for n in edge_ids if "MultivariateNormal" in n or "batched-cov" in n]
    anchor_line = {r["line"] for r in on["records"] if r["case"] == "scalar"}
    assert {r["line"] for r in on["records"] if r["case"].startswith("edge-")} == anchor_line
    assert on["run"]["counts"]["failed"] == 0


def test_a_family_a_framework_lacks_is_no_item_but_the_run_says_so(case_dir, run_suite) -> None:
    """No placeholder item: the run header's ``not_offered`` names the family, with why."""
    cases = case_dir({"mvn.yaml": GOOD})
    result, data = run_suite(cases, "--framework", "gpytorch", "-rs")
    result.assert_outcomes(passed=4)
    assert not [r for r in data["records"] if "unsupported" in r["nodeid"]]
    assert data["run"]["not_offered"] == {
        "gpytorch": [
            {"family": "Normal", "parametrization": "loc_scale", "reason": "gpytorch has no Normal"}
        ]
    }
    _, torch = run_suite(cases, "--framework", "torch")
    assert torch["run"]["not_offered"] == {}


def test_keyword_selection(case_dir, run_suite) -> None:
    cases = case_dir({"mvn.yaml": GOOD})
    result, data = run_suite(cases, "-k", "numpyro and float64 and log_prob")
    result.assert_outcomes(passed=2)
    assert all("[numpyro-float64-log_prob]" in n for n in nodeids(data))


def test_broken_case_fails_locally_and_everything_else_runs(case_dir, run_suite) -> None:
    cases = case_dir({"a.yaml": BROKEN, "b.yaml": GOOD, "c.yaml": "cases: [\n"})
    result, data = run_suite(cases, "--framework", "torch")
    result.assert_outcomes(passed=12, failed=2)
    errors = [r for r in data["records"] if r["outcome"] == "error"]
    assert {r["nodeid"] for r in errors} == {
        "cases/a.yaml::typo[case-error-line7]",
        "cases/c.yaml::<file>[case-error-line2]",
    }
    typo = next(r for r in errors if "typo" in r["nodeid"])
    assert typo["message"].startswith(
        "cases/a.yaml:7: case 'typo': 'Bernouli' is no family (did you mean 'Bernoulli'?)"
    )
    assert typo["kind"] == "case_error"
    assert "cases/a.yaml:7: case 'typo': 'Bernouli' is no family" in result.stdout.str()
    assert any(n.startswith("cases/a.yaml::fine[torch-") for n in nodeids(data))


def test_framework_exception_and_nan_are_failing_items(case_dir, run_suite) -> None:
    cases = case_dir({"mvn.yaml": GOOD})
    result, data = run_suite(
        cases,
        "--adapter",
        "fake_adapters:RaisingAdapter",
        "--adapter",
        "fake_adapters:NanAdapter",
        "--framework",
        "fake.*",
        "--check",
        "log_prob",
    )
    result.assert_outcomes(failed=8)
    by_fw = {}
    for rec in data["records"]:
        by_fw.setdefault(rec["framework"], set()).add(rec["kind"])
        assert rec["outcome"] == "failed"
    assert by_fw == {"fake.raises": {"raises"}, "fake.nan": {"nan"}}
    text = result.stdout.str()
    assert "log_prob raised RuntimeError: boom: simulated framework failure" in text
    assert "INTERNALERROR" not in text


def test_a_framework_warning_is_kept_in_its_item_and_is_no_failure(
    pytester, case_dir, run_suite
) -> None:
    # A downstream project's pytest configuration often says filterwarnings = error; the item
    # is judged on its results, and the framework's warning is kept in the item's record, not
    # in the run's warnings summary, where it would read as the suite's own.
    cases = case_dir({"mvn.yaml": GOOD})
    pytester.makeini("[pytest]\nfilterwarnings =\n    error\n")
    result, data = run_suite(
        cases, "--adapter", "fake_adapters:WarningAdapter", "--framework", "fake.warns"
    )
    result.assert_outcomes(passed=len(data["records"]))
    assert len(data["records"]) == 8
    assert "simulated framework warning" not in result.stdout.str()
    for record in data["records"]:
        (caught,) = record["warnings"]
        assert caught["category"] == "UserWarning"
        assert caught["message"] == "simulated framework warning"
        assert caught["where"].startswith("conformance/"), caught  # the caller, stacklevel 2


def test_missing_framework_skips_with_reason(case_dir, run_suite) -> None:
    cases = case_dir({"mvn.yaml": GOOD})
    result, data = run_suite(
        cases, "--adapter", "fake_adapters:MissingAdapter", "--framework", "fake.missing"
    )
    result.assert_outcomes(skipped=8)
    assert {r["message"] for r in data["records"]} == {
        "no-such-framework is not importable: ModuleNotFoundError: No module named "
        "'no_such_framework_for_conformance_tests'"
    }


def test_header_prints_versions_device_and_env(case_dir, run_suite, monkeypatch) -> None:
    monkeypatch.setenv("CONFORMANCE_DTYPES", "float64")
    cases = case_dir({"mvn.yaml": GOOD})
    result, data = run_suite(cases, "--framework", "torch")
    out = result.stdout.str()
    assert "conformance 0.1.0: torch " in out and "numpyro " in out and "gpytorch " in out
    assert "conformance device: cpu" in out
    assert "CONFORMANCE_DTYPES=float64" in out
    assert {r["dtype"] for r in data["records"]} == {"float64"}
    assert data["run"]["env"] == {"CONFORMANCE_DTYPES": "float64"}


def test_typo_in_a_selection_is_a_usage_error(case_dir, run_suite) -> None:
    cases = case_dir({"mvn.yaml": GOOD})
    result, _ = run_suite(cases, "--framework", "pytorch")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--conformance-framework 'pytorch' matches no adapter" in result.stderr.str()


def test_yaml_outside_case_roots_is_not_collected(pytester, case_dir) -> None:
    pytester.makefile(".yaml", unrelated="cases:\n  - id: x\n")
    pytester.makepyfile(test_plain="def test_ok():\n    assert True\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert not (pytester.path / "reports" / "results.json").exists()


def test_case_file_named_on_the_command_line_is_collected(pytester) -> None:
    path = pytester.makefile(".yaml", mine=GOOD)
    result = pytester.runpytest(
        str(path),
        "--conformance-framework",
        "torch",
        "--conformance-check=shapes,log_prob",
        "--conformance-edges=off",
        "--conformance-no-results",
    )
    result.assert_outcomes(passed=8)


def test_zero_size_log_prob_is_skipped_not_passed(case_dir, run_suite) -> None:
    cases = case_dir(
        {
            "z.yaml": """\
            cases:
              - id: empty
                family: Normal
                params: {loc: {generator: normal, shape: [0], seed: 1}, scale: 1.0}
                value: {sample: {seed: 2}}
            """
        }
    )
    result, data = run_suite(cases, "--framework", "torch")
    result.assert_outcomes(passed=2, skipped=2)
    skipped = {r["message"] for r in data["records"] if r["outcome"] == "skipped"}
    assert skipped == {"nothing to compare: log_prob shape (0,)"}


def test_xdist_run_records_every_item(case_dir, run_suite) -> None:
    cases = case_dir({"mvn.yaml": GOOD, "broken.yaml": BROKEN})
    result, data = run_suite(
        cases, "-n", "2", "--framework", "torch,numpyro,gpytorch*", subprocess=True
    )
    assert result.ret == 1
    outcomes = data["run"]["counts"]
    assert len(data["records"]) == data["run"]["collected"] == sum(outcomes.values())
    assert outcomes["error"] == 1 and outcomes["failed"] == 0
    assert data["run"]["workers"] == 2
    ids = nodeids(data)
    assert len(ids) == len(set(ids))
    # The same items as a serial run, in the same order.
    _, serial = run_suite(cases, "--framework", "torch,numpyro,gpytorch*", subprocess=True)
    assert nodeids(serial) == ids
    assert [r["outcome"] for r in serial["records"]] == [r["outcome"] for r in data["records"]]
    # The controller, which plans no items, knows what the frameworks lack all the same.
    lacking = data["run"]["not_offered"]
    assert lacking == serial["run"]["not_offered"]
    assert {e["family"] for e in lacking["gpytorch"]} == {"Bernoulli", "Normal"}
    assert "torch" not in lacking


def test_results_file_is_valid_strict_json(case_dir, run_suite) -> None:
    cases = case_dir({"mvn.yaml": GOOD})
    _, data = run_suite(cases, "--adapter", "fake_adapters:NanAdapter", "--framework", "fake.nan")
    raw = json.dumps(data, allow_nan=False)  # would raise on NaN/inf
    assert '"actual_at_worst": "nan"' in raw


def test_cuda_items_skip_with_a_reason_where_there_is_none(case_dir, run_suite) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA; the GPU run is exercised for real there")
    cases = case_dir({"mvn.yaml": GOOD})
    result, data = run_suite(cases, "--device", "cuda", "--framework", "torch,numpyro")
    result.assert_outcomes(skipped=16)
    reasons = {r["framework"]: r["message"] for r in data["records"]}
    assert "CUDA" in reasons["torch"] and "GPU" in reasons["numpyro"]
    assert {r["device"] for r in data["records"]} == {"cuda"}
    # Nothing was tested: a CI job must not go green on it (it once exited 0).
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines(["conformance: all 16 items were skipped, nothing was tested*"])
    assert data["run"]["exitstatus"] == pytest.ExitCode.USAGE_ERROR


def test_an_empty_shard_exits_0_with_results_to_merge(case_dir, run_suite) -> None:
    """A small selection over many CI shards leaves some empty: each is a complete, empty part
    of the run (it once exited 2 and wrote nothing, so the merge missed a shard)."""
    cases = case_dir({"mvn.yaml": GOOD})
    _, whole = run_suite(cases, "--framework=torch", "--dtype=float64")
    held = Counter(shard_of(r["nodeid"], 100) for r in whole["records"])
    empty = next(k for k in range(1, 101) if k not in held)
    result, data = run_suite(cases, "--framework=torch", "--dtype=float64", f"--shard={empty}/100")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines([f"conformance: shard {empty}/100 has no items (exit 0)"])
    assert data["records"] == [] and data["run"]["shard"] == [empty, 100]
    k, count = held.most_common(1)[0]
    result, data = run_suite(cases, "--framework=torch", "--dtype=float64", f"--shard={k}/100")
    assert result.ret == pytest.ExitCode.OK and len(data["records"]) == count


FLAKY_CASE = """
cases:
  - id: n
    family: Normal
    params: {loc: [0.0, 1.0], scale: [1.0, 2.0]}
    value: [0.5, 0.5]
"""


@pytest.mark.parametrize(("flaky", "outcome"), [("false", "failed"), ("true", "xpassed")])
def test_a_flaky_entry_that_passes_is_not_a_strict_xpass(
    case_dir, run_suite, pytester, flaky, outcome
) -> None:
    # A bug that shows on some runs only (GPyTorch's iterative path) must not fail the runs
    # where it happens not to show; any other entry that passes still does.
    kf = pytester.path / "kf.yaml"
    kf.write_text(
        "known_failures:\n"
        "  - id: sometimes\n"
        "    framework: numpyro\n"
        "    case: n\n"
        "    check: log_prob\n"
        "    kind: value\n"
        f"    flaky: {flaky}\n"
        "    reason: shows on some runs only\n"
    )
    cases = case_dir({"n.yaml": FLAKY_CASE})
    _, data = run_suite(
        cases,
        "--framework=numpyro",
        "--dtype=float64",
        "--check=log_prob",
        f"--known-failures={kf}",
    )
    [record] = data["records"]
    assert record["outcome"] == outcome, record["message"]


def test_an_entry_that_says_run_false_xfails_without_running(case_dir, run_suite, pytester) -> None:
    """``run: false`` (a framework that hangs on these items): xfailed, [NOTRUN], and the
    framework never called, here an item that would otherwise pass (no XPASS, no time spent)."""
    kf = pytester.path / "kf.yaml"
    kf.write_text(
        "known_failures:\n"
        "  - id: hangs\n"
        "    framework: torch\n"
        "    case: n\n"
        "    check: log_prob\n"
        "    kind: timeout\n"
        "    run: false\n"
        "    reason: runs for minutes\n"
    )
    cases = case_dir({"n.yaml": FLAKY_CASE})
    _, data = run_suite(
        cases, "--framework=torch", "--dtype=float64", "--check=log_prob", f"--known-failures={kf}"
    )
    [record] = data["records"]
    assert record["outcome"] == "xfailed"
    assert record["message"].startswith("[NOTRUN] known failure hangs")
    assert record["metrics"] in ({}, None)  # nothing was measured: the check never ran
