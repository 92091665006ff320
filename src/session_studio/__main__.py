"""``python -m session_studio``: the same as the ``session-studio`` command."""

import sys

from .launcher import main

sys.exit(main())
