"""``python -m train.ppo``: the batched PPO trainer (``train.ppo.trainer``)."""

import sys

from train.ppo.trainer import main

sys.exit(main())
