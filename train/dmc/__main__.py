"""``python -m train.dmc``: the Deep Monte-Carlo trainer (``train.dmc.trainer``)."""

import sys

from train.dmc.trainer import main

sys.exit(main())
