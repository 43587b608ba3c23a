"""torch.distributions: the adapter (:mod:`.adapter`) and how a reproducer writes torch (:mod:`.dialect`)."""
