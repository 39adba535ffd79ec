FROM python:3.11-slim

WORKDIR /app
ENV PYTHONUNBUFFERED=1 \
    LITELLM_LOCAL_MODEL_COST_MAP=True

COPY pyproject.toml README.md ./
COPY lib ./lib
RUN pip install --no-cache-dir -e ".[test]"

COPY tests ./tests
COPY fixtures ./fixtures

ENTRYPOINT ["graphrag-mcp"]
CMD ["serve", "--transport", "streamable-http", "--host", "0.0.0.0", "--index-path", "/data/index"]
