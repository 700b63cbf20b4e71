"""Hostile-input tests: every escape a signed-in user found, with its variants (issue 10)."""
