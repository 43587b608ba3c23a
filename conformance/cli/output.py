"""Where a generated page or document goes: stdout, or the file ``-o`` names."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from conformance.cli.command import EXIT_OK


def add_output_file(parser: argparse.ArgumentParser) -> None:
    """The ``-o``/``--output`` option of a command that prints a document."""
    parser.add_argument("-o", "--output", type=Path, help="file to write (default: stdout)")


def emit(text: str, out: Path | None) -> int:
    """A generated page or document: to stdout, or to ``out``."""
    if out is None:
        sys.stdout.write(text)
    else:
        out.write_text(text, encoding="utf-8")
    return EXIT_OK
