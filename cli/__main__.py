"""`python -m errkb.cli ...`: the same as the `errkb` command."""

import sys

from errkb.cli import main

sys.exit(main())
