"""``python -m estimator`` runs the ``mbstate`` command."""

import sys

from estimator.cli import main

sys.exit(main())
