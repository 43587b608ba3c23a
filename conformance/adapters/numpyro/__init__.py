"""NumPyro on JAX: the adapter (:mod:`.adapter`), compiled evaluation (:mod:`.compiled`), the
executable store and the live-code key it is found by (:mod:`.executables`, :mod:`.live_code`),
JAX's persistent cache and its pruning (:mod:`.cache`, :mod:`.cache_pruning`), one MLIR context
per process (:mod:`.lowering`) and the reproducer dialect (:mod:`.dialect`)."""
