"""``python -m agents.ppo``: see :func:`agents.ppo.cli.main`."""
from .cli import main

main()
