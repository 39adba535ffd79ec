"""`index --dry-run`: what a run would process and cost, checked against the offline model's
actual counts of the same run; nothing written, no model called."""

import shutil
from pathlib import Path

import pytest

from conftest import CORPUS, run_cli

pytestmark = pytest.mark.slow  # builds an index of its own


def _dry_run(data: Path, root: Path) -> dict:
    result = run_cli(
        "index", data, "--index-path", root, "--offline", "--dry-run", "--format", "json"
    )
    assert result.code == 0, result.stderr
    return result.json()


def _index(data: Path, root: Path) -> dict:
    result = run_cli("index", data, "--index-path", root, "--offline", "--format", "json")
    assert result.code == 0, result.stderr
    return result.json()


def test_the_estimate_matches_what_the_run_then_does(tmp_path: Path) -> None:
    data, root = tmp_path / "data", tmp_path / "index"
    shutil.copytree(CORPUS, data)
    cold = _dry_run(data, root)
    assert not root.exists()  # a look writes nothing, not even settings.yaml
    built = _index(data, root)
    assert cold["mode"] == "full" and cold["documents"] == built["documents"]
    assert cold["chunks"] == cold["chunks_to_extract"] == built["text_units"]
    # one extraction call a chunk (max_gleanings: 0), exact
    assert cold["extraction_calls"] == built["computed"]["extraction"] == built["text_units"]
    assert cold["summary_calls"] is None and cold["calls"] <= built["llm_calls"]  # a floor

    edited = sorted(data.iterdir())[2]
    edited.write_text(edited.read_text() + "\nLeonard Quist met Zora Quillfeather at the pier.\n")
    (data / "zz_note.txt").write_text(
        "A note\n\nPerpetua Quimby met Leonard Quist at the pier. Perpetua Quimby wrote about "
        "the harbour dues.\n"
    )
    sorted(data.iterdir())[5].unlink()
    before = sorted(path.name for path in (root / "versions").iterdir())
    update = _dry_run(data, root)
    assert sorted(path.name for path in (root / "versions").iterdir()) == before
    updated = _index(data, root)
    assert update["mode"] == "incremental" and update["documents_deleted"] == 1
    assert update["documents_to_index"] == 2 and update["documents"] == updated["documents"]
    assert update["extraction_calls"] == updated["computed"]["extraction"] == 2
    # the summaries and reports are estimated for a model whose answers follow the text unit;
    # the offline model's extractive answers change less, so the run costs no more
    assert update["extraction_calls"] <= updated["llm_calls"] <= update["calls"], (update, updated)
    assert update["summary_calls"] > 0 and update["report_calls"] > 0


def test_a_dry_run_prints_one_line_a_figure(tmp_path: Path) -> None:
    result = run_cli("index", CORPUS, "--index-path", tmp_path / "index", "--dry-run")
    assert result.code == 0, result.stderr
    assert "Extraction calls: " in result.stdout and "Summary calls: unknown" in result.stdout
    assert not (tmp_path / "index").exists()
