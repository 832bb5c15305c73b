"""What the trainers of ``train/`` share: the network, its checkpoint, the imitation warm start, the opponent pool
and the start of a run. Every trainer (``train.ppo``, ``train.dmc``, ``train.exit``, ``train.sb3``) and the research
tools import these from here, and no trainer imports another's package; nothing here imports a trainer.

Its modules, each importing only the ones above it: ``policy_net`` (the network with its sparse first layer, sparse
batches and their storage, masking), ``imitation`` (the heuristic's decisions recorded and a policy fitted to them),
``opponent_pool`` (who plays the opponent seats, deal by deal), ``checkpoint`` (``checkpoint.pt`` and the policy
file of a network), ``run_start`` (the run folder claimed, the arguments resolved and saved, the command recorded,
torch seeded). The run folder's files themselves (the run state, the report) are ``train.runs`` and
``train.run_dir``. The modules are imported where they are used (this package imports nothing: torch loads with
the trainer).
"""

__all__: list[str] = []
