"""`python -m tunecore`: the `tunecore` command, for an environment whose
scripts directory is not on the PATH."""

import sys

from tunecore.cli import main

sys.exit(main())
