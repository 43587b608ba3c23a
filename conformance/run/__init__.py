"""Running: options and settings, the pytest-free plan, pytest items and hooks, timeouts, memory, listing."""
