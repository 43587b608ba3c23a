"""What keeps each process running items healthy: per-item timeouts and crash dumps, the
memory guard, the garbage collector's policy, and the timing every worker hands back."""
