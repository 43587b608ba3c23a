"""NumPyro on JAX: the adapter (:mod:`.adapter`), compiled evaluation (:mod:`.compiled`), what
compiled code keeps between runs (:mod:`.store`: the executable store, its live-code key, JAX's
persistent cache and its pruning, one MLIR context per process) and the reproducer dialect
(:mod:`.dialect`)."""
