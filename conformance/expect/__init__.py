"""Expectations: the oracle's answers for a case, built once per subject (the only way a check reads the oracle)."""
