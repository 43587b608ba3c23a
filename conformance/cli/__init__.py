"""``conformance``: the command line, one module per subcommand."""

from conformance.cli.app import main

__all__ = ["main"]
