"""Test oracles: reference implementations the tests compare against (never shipped)."""
