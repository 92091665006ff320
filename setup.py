"""Only the optional C helper; everything else about the package is in pyproject.toml.

The session loader's common case in C (src/session_studio/core/_bulkindex.c) is built by
`pip install` where a C compiler and the Python headers are at hand and skipped where not
(`optional=True`): the Python loop is the reference and runs either way.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "session_studio.core._bulkindex",
            sources=["src/session_studio/core/_bulkindex.c"],
            optional=True,
        )
    ]
)
