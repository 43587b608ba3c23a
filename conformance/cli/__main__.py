"""``python -m conformance.cli``: the same as the ``conformance`` command."""

import sys

from conformance.cli import main

sys.exit(main())
