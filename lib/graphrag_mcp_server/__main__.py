"""python -m graphrag_mcp_server"""

import sys

from graphrag_mcp_server.cli.main import main

sys.exit(main())
