"""The pytest side of a run with case files: the hooks :mod:`conformance.run.plugin` registers,
the collectors and items, the controller's recorder, xdist's scheduling, progress lines, and
why a run collected nothing."""
