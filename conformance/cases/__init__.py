"""Case files: reading YAML, validating it, the case model, generated and variant cases."""
