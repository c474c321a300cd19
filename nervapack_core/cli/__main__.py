"""``python -m nervapack_core.cli``: the ``nervapack`` command line."""

import sys

from . import main

sys.exit(main())
