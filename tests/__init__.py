"""The guide's test suite: run `pytest` from the repository root."""
