"""GPyTorch's distributions and priors, one adapter per covariance representation
(:mod:`.adapter`), the operators they build (:mod:`.operators`) and their reproducer dialect."""
