"""Names vulture cannot see used: each is read by something outside the scanned source (pytest,
a framework, a Jinja template, a registry file, the suite's own tests). Reviewed by hand; an
entry says who uses the name. vulture reads this file, nothing runs it.

Kinds of use the configuration covers instead (pyproject.toml, ``[tool.vulture]``): pytest hooks
(``pytest_*``), pydantic's ``model_config`` and validators, JAX's ``defjvp`` rules; and
tests/project/dead_code.py, the oracle families' module-level instances (found by scanning
each module of reference/families).
"""
# ruff: noqa: B018  (each line names an attribute for vulture; none is code to run)

from conformance.adapters.numpyro.store import lowering
from conformance.commands import coverage
from conformance.mutants import numpyro_mutants, torch_mutants
from conformance.records import record, results
from conformance.reference import core, summaries
from conformance.reference.kl import registry as kl_registry
from conformance.registry import callables, kl_pairs, transform_classes
from conformance.report import details, svg, values
from conformance.reproducers import script
from conformance.run.session import items, project_fixtures

# pytest's Item API: pytest calls these on the suite's items.
items.CaseItem.reportinfo  # the location shown for a failing item
items.ConformanceItem.runtest
items.InvalidCaseItem.runtest
items.UnsupportedItem.runtest
# pytest's fixture machinery reads these from an item it fills fixtures for.
project_fixtures.fill._fixtureinfo
project_fixtures.fill.fixturenames
project_fixtures.fill.funcargs
project_fixtures.fill._request

# The frameworks read them: a mutant sets a distribution's batch shape the way the bug did, and
# torch.autograd.Function calls forward/setup_context/backward and reads generate_vmap_rule.
numpyro_mutants._batch_shape
torch_mutants._batch_shape
torch_mutants.forward
torch_mutants.setup_context
torch_mutants.backward
torch_mutants.generate_vmap_rule

# The report's Jinja templates read them (conformance/report/templates/).
details.raw_arrays  # _detail.html.j2
details.expected_shapes  # _detail.html.j2
svg.height  # _histogram.svg.j2
values.truncated  # _detail.html.j2

# A registry file names it by its dotted path (euler_maruyama.yaml's call:).
callables.ornstein_uhlenbeck

# API the suite's own tests (and downstream tools) use; the package itself does not call it.
core.Family.elementwise_grad  # the oracle's per-element gradients: tests/oracle
core.Family.draw_moments  # the moments themselves, against the oracle's draws: tests/oracle/test_draw_moments.py
results.load_results  # results.json's reader: tests/running/test_robustness.py
coverage.readme_line  # the README's coverage line: tests/project/test_coverage.py
coverage.FrameworkCoverage.stale_exclusions  # tests/project/test_coverage.py fails on one
lowering.unshare_context  # tests/frameworks/test_jax_lowering.py
kl_registry.KLPair.via  # the registered pair an alias's pair is computed by: tests/oracle/test_oracle_kl.py
kl_pairs.kl_rules  # the KL rules each framework registers: tests/oracle/test_oracle_kl.py, tests/frameworks/test_kl_rules.py

# Called by name: Summaries.summary reads getattr(self, Summary(...).hook), each family's override.
summaries.Summaries._mean
summaries.Summaries._variance
summaries.Summaries._mode
summaries.Summaries._entropy
# Looked up by value (Summary("mean")) and iterated: tests/oracle/test_summaries_continuous.py.
summaries.Summary.MEAN
summaries.Summary.VARIANCE
summaries.Summary.MODE

# Set by keyword through dataclasses.replace, which vulture cannot follow.
record.Attachments.framework_notes  # run/session/items.py

# ast.unparse reads them: a script's copy of a function has its annotations set to None.
script.ast.FunctionDef.returns
script.ast.arg.annotation
# The transform table's answers, read by tests/oracle/test_oracle_transforms.py and, next, by
# the transform checks that build each framework's class from it.
transform_classes.transform_class
transform_classes.TransformClass.no_log_abs_det_jacobian
