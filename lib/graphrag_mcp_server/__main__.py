"""python -m graphrag_mcp_server"""

from graphrag_mcp_server.cli.main import main

main()
