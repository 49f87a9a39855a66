"`python -m funccall.mcp serve TARGET ...`: see `funccall.mcp.cli`"
import sys

from .cli import main

sys.exit(main())
