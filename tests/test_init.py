"""`graphrag-mcp init`: graphrag's own settings.yaml and prompts, configured per provider."""

from pathlib import Path

import pytest
import yaml

from conftest import run_cli


@pytest.mark.parametrize("provider", ["openai", "azure", "ollama", "offline"])
def test_init_writes_loadable_graphrag_settings(tmp_path: Path, provider: str, monkeypatch) -> None:
    result = run_cli("init", "--index-path", tmp_path, "--provider", provider)
    assert result.code == 0, result.stderr
    text = (tmp_path / "settings.yaml").read_text()
    assert (tmp_path / "prompts" / "extract_graph.txt").exists()
    assert (tmp_path / "prompts" / "local_search_system_prompt.txt").exists()
    if provider in {"openai", "azure"}:
        assert "${GRAPHRAG_API_KEY}" in text
    assert "sk-" not in text and "<API_KEY>" not in (tmp_path / ".env").read_text()

    monkeypatch.setenv("GRAPHRAG_API_KEY", "test-key")
    monkeypatch.setenv("GRAPHRAG_API_BASE", "https://example.openai.azure.com")
    from graphrag_mcp_server.config.index_root import load_index_config

    cwd = Path.cwd()
    try:
        config = load_index_config(tmp_path)
    finally:
        import os

        os.chdir(cwd)
    completion = config.completion_models["default_completion_model"]
    embedding = config.embedding_models["default_embedding_model"]
    expected_provider = {
        "openai": "openai",
        "azure": "azure",
        "ollama": "ollama_chat",
        "offline": "offline",
    }[provider]
    assert completion.model_provider == expected_provider
    assert config.vector_store.vector_size == yaml.safe_load(text)["vector_store"]["vector_size"]
    assert embedding.model
    assert (
        config.input.file_pattern
        == r"(^|/)[^./][^/]*\.(csv|docx|htm|html|json|jsonl|markdown|md|pdf|pptx|txt|xlsx)$"
    )
    assert config.cluster_graph.use_lcc is False


def test_init_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    assert run_cli("init", "--index-path", tmp_path, "--provider", "offline").code == 0
    again = run_cli("init", "--index-path", tmp_path, "--provider", "openai")
    assert again.code == 1 and "--force" in again.stderr
    forced = run_cli("init", "--index-path", tmp_path, "--provider", "openai", "--force")
    assert forced.code == 0
    assert "model_provider: openai" in (tmp_path / "settings.yaml").read_text()


def test_init_custom_models(tmp_path: Path) -> None:
    result = run_cli(
        "init",
        "--index-path",
        tmp_path,
        "--provider",
        "ollama",
        "--model",
        "qwen2.5",
        "--embedding-model",
        "mxbai-embed-large",
    )
    assert result.code == 0, result.stderr
    settings = yaml.safe_load((tmp_path / "settings.yaml").read_text().replace("${", "$"))
    assert settings["completion_models"]["default_completion_model"]["model"] == "qwen2.5"
    assert settings["embedding_models"]["default_embedding_model"]["model"] == "mxbai-embed-large"
    assert settings["vector_store"]["vector_size"] == 1024


def test_stats_before_the_first_index_creates_nothing(tmp_path: Path) -> None:
    """`init` then `stats`: one line saying there is no index yet, and the root exactly as init left
    it (no empty output folder for the next `index` to ask about)."""
    root = tmp_path / "idx"
    assert run_cli("init", "--index-path", root, "--provider", "ollama").code == 0
    before = sorted(path.relative_to(root) for path in root.rglob("*"))

    result = run_cli("stats", "--index-path", root)

    assert result.code == 1
    assert result.stderr.strip() == (
        f"error: no index in {root / 'output'}; build it with: graphrag-mcp index "
        f"DATA_PATH --index-path {root}"
    )
    assert sorted(path.relative_to(root) for path in root.rglob("*")) == before
