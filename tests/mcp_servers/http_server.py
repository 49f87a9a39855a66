"funccall's MCP server for `plain_tools`, over streamable HTTP at `http://127.0.0.1:PORT/mcp`: `python http_server.py PORT`"
import sys
from pathlib import Path

import uvicorn

sys.path.insert(0, str(Path(__file__).parent))
import plain_tools  # noqa: E402

from funccall.mcp import mk_server  # noqa: E402

app = mk_server([getattr(plain_tools, nm) for nm in plain_tools.__all__]).streamable_http_app()

if __name__ == '__main__': uvicorn.run(app, host='127.0.0.1', port=int(sys.argv[1]), log_level='warning')
