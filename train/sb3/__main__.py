"""``python -m train.sb3``: the MaskablePPO self-play trainer (``train.sb3.trainer``)."""

import sys

from train.sb3.trainer import main

sys.exit(main())
