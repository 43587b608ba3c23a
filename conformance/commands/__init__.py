"""CLI commands that are neither a run nor part of one: ``conformance list`` and ``init``."""
