"""The plan: which items a run has, decided without pytest.

:mod:`~conformance.plan.planner` turns case files into item specs (:mod:`~conformance.plan.specs`),
with the cases it derives (:mod:`~conformance.plan.derived`: broadcast variants and generated
edges) and ``--quick``'s covering design (:mod:`~conformance.plan.quick`). The pytest side only
wraps the specs in items.
"""
