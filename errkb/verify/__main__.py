import sys

from errkb.verify.cli import main

sys.exit(main())
