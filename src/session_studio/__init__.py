"""Session Studio: see, plan and commit compactions of pi coding-agent sessions."""

__all__ = ["__version__"]

__version__ = "0.1.0"
