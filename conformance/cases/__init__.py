"""Case files: reading YAML, validating it, the case model, generated and variant cases."""

#: What a case file is called (only under a case root, or named on the command line). Here, in
#: the package's light face, so the pytest entry point can tell a case file without the loader.
CASE_SUFFIXES = (".yaml", ".yml")
