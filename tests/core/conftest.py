"""Fixtures of the core tests (the loader on and off: tests/conftest.py bulk_loader)."""
