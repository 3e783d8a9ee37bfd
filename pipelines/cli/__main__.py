"""``python -m pipelines.cli``: the ``varcap`` command."""

import sys

from pipelines.cli import main

sys.exit(main())
