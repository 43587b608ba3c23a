"""Numbers several oracle families share, defined once so each is one expression and one set of
bits wherever it is read."""

from __future__ import annotations

import numpy as np

HALF_LOG_2PI = 0.5 * np.log(2.0 * np.pi)
LOG_2PI = np.log(2.0 * np.pi)
LOG_PI = np.log(np.pi)
LOG_2 = np.log(2.0)
LOG_2_OVER_PI = np.log(2.0 / np.pi)
#: NumPyro's constraints.circular: the closed interval [−π, π].
CIRCLE = f"interval:{-np.pi!r},{np.pi!r}"
