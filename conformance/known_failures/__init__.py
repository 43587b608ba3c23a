"""Known failures: the registry of expected framework bugs (the YAML files here, one per area,
README.md for the format), their loader and matcher (:mod:`.entries`), and ``conformance triage``
(:mod:`.triage`), which drafts entries from a run's failures."""
