"""conformance: a cross-framework conformance test suite for probability distributions."""

__version__ = "0.1.0"
