"`python -m funccall`: see `funccall.cli`"
import os, sys

from .cli import main

if __name__ == '__main__':
    try: sys.exit(main())
    except BrokenPipeError:  # `funccall schema ... | head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
