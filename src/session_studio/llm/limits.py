"""The default time limits of an LLM call, in a module of their own: the CLI's argument parser shows
them in its help without importing the LLM code (a `plan` never calls a model)."""

from __future__ import annotations

from typing import Final

__all__ = ["DEFAULT_DEADLINE_S", "DEFAULT_IDLE_TIMEOUT_S"]

#: a reasoning model may think for minutes before a long summary; nothing legitimate takes 10
DEFAULT_DEADLINE_S: Final[float] = 600.0
DEFAULT_IDLE_TIMEOUT_S: Final[float] = 120.0
