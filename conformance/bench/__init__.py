"""``conformance bench``: how long the suite takes, where the time goes, and against what.

:mod:`conformance.bench.baseline` is the bare loop (the frameworks' own work with no harness);
:mod:`conformance.bench.runner` runs the suite and the baseline and writes JSON and a table.
"""
