"""``python -m majiang_env.training.ppo``: see :func:`majiang_env.training.ppo.cli.main`."""
from .cli import main

main()
