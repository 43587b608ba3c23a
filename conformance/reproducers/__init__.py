"""Reproducers: standalone scripts (framework and NumPy only) written for each failing item —
:mod:`.render` assembles them, :mod:`.script` is what a check writes its part with, and
:mod:`.dialects` the interface through which each adapter writes its framework's code."""
