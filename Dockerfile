FROM python:3.11-slim

WORKDIR /app
ENV PYTHONUNBUFFERED=1 \
    LITELLM_LOCAL_MODEL_COST_MAP=True

COPY pyproject.toml README.md ./
COPY lib ./lib
RUN pip install --no-cache-dir -e ".[test]"

COPY tests ./tests
COPY fixtures ./fixtures
COPY docs ./docs
COPY scripts ./scripts
COPY package.json package-lock.json ./

# Serving on 0.0.0.0 requires authentication: run with -e GRAPHRAG_MCP_AUTH_TOKEN=<long random secret>
# (or GRAPHRAG_MCP_AUTH_ISSUER for OAuth); see docs/security.md. Add --read-only, or
# --data-path /data/docs to let the build_index tool index a mounted folder.
ENTRYPOINT ["graphrag-mcp"]
CMD ["serve", "--transport", "streamable-http", "--host", "0.0.0.0", "--index-path", "/data/index"]
