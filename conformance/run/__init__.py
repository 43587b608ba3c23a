"""Running the suite, by concern: :mod:`~conformance.run.plugin` is pytest's entry point (light,
dormant without case files); :mod:`~conformance.run.config` the options and settings, and the
plan's selection built from them; :mod:`~conformance.run.subject_factory` the one way to build
an item's subject; :mod:`~conformance.run.session` the pytest side (hooks, and items that wrap
the specs of :mod:`conformance.plan`, recorder); and :mod:`~conformance.run.worker` the health
of each process that runs items."""
