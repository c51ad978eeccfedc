"""``python -m majiang_env COMMAND [options]``: the command line (``majiang_env.cli``)."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
