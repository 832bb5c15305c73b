"""``python -m train.exit``: the expert-iteration trainer (``train.exit.trainer``)."""

import sys

from train.exit.trainer import main

sys.exit(main())
