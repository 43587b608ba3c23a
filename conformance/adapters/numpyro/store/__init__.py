"""What NumPyro's compiled code keeps between runs: the executable store and the live-code key
it is found by (:mod:`.executables`, :mod:`.live_code`), JAX's persistent cache and its pruning
(:mod:`.cache`, :mod:`.cache_pruning`, :mod:`.commands`), one MLIR context per process
(:mod:`.lowering`)."""
