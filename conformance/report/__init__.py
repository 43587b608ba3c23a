"""Reports rendered from results.json alone: HTML, diffs, reproducer files, the JUnit default.

Everything here reads the records a run wrote (one file, or the shards of one run) and never
imports a framework, so a report can be rebuilt anywhere from the JSON.
"""

from __future__ import annotations

from conformance.report.merge import Results, ResultsError, load_results_files

__all__ = ["Results", "ResultsError", "load_results_files"]
