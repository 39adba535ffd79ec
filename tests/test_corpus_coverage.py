"""Every document counts: every entity in a community on a corpus of unrelated topics, and folders
of mixed formats (generated here with fpdf2, python-docx, python-pptx, openpyxl) indexed, updated
and searched."""

import json
import shutil
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import built_once, run_cli
from mcp_client import IN_PROCESS, mcp_session

sys.path.insert(0, str(Path(__file__).resolve().parent / "benchmarks"))
from bench_retrieval import TOPICS, generate_topics

pytestmark = pytest.mark.slow  # indexes of generated folders


def unclustered(output: Path) -> int:
    communities = pd.read_parquet(output / "communities.parquet")
    entities = pd.read_parquet(output / "entities.parquet")
    held = {entity for ids in communities["entity_ids"] for entity in ids}
    return int((~entities["id"].isin(held)).sum())


def _build_topics(work: Path) -> None:
    generate_topics(work / "data")
    result = run_cli("index", work / "data", "--index-path", work / "index", "--offline")
    assert result.code == 0, result.stderr


@pytest.fixture(scope="session")
def topics_index(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> tuple[Path, Path]:
    """Unrelated topics and their index, built once per run, read-only."""
    work, _ = built_once(tmp_path_factory, worker_id, "topics", _build_topics)
    return work / "data", work / "index"


async def test_unrelated_topics_keep_every_entity_and_answer_who_is(
    topics_index: tuple[Path, Path],
) -> None:
    data, root = topics_index
    assert yaml.safe_load((root / "settings.yaml").read_text())["cluster_graph"]["use_lcc"] is False
    assert unclustered(root / "output") == 0
    stats = run_cli("stats", "--index-path", root, "--format", "json")
    assert stats.code == 0 and stats.json()["issues"] == []
    async with mcp_session(root, IN_PROCESS) as session:
        for topic in TOPICS:
            person = topic["people"][0]
            result = await session.call_tool(
                "local_search", {"query": f"Who is {person}?", "context_only": True}
            )
            context = result.structured_content
            assert person.upper() in [
                entity["name"] for entity in context["context"]["entities"][:3]
            ], person
            kind = topic["kind"].replace(" ", "_")
            assert any(source["document"].startswith(kind) for source in context["sources"]), person
            themes = await session.call_tool(
                "global_search",
                {
                    "query": f"What do the documents say about the {topic['theme']}?",
                    "context_only": True,
                },
            )
            reports = " ".join(
                report["content"] for report in themes.structured_content["context"]["reports"]
            )
            assert person.upper() in reports.upper(), topic["theme"]


def test_a_root_that_keeps_use_lcc_is_told_what_it_loses(
    topics_index: tuple[Path, Path], tmp_path: Path
) -> None:
    data, built = topics_index
    root = tmp_path / "index"
    root.mkdir()
    settings = yaml.safe_load((built / "settings.yaml").read_text())
    settings["cluster_graph"]["use_lcc"] = True
    (root / "settings.yaml").write_text(yaml.safe_dump(settings))
    for prompt in (built / "prompts").iterdir():
        (root / "prompts").mkdir(exist_ok=True)
        (root / "prompts" / prompt.name).write_text(prompt.read_text())
    assert run_cli("index", data, "--index-path", root, "--offline").code == 0
    lost = unclustered(root / "output")
    assert lost > 0
    stats = run_cli("stats", "--index-path", root)
    assert stats.code == 0
    assert (
        f"warning: {lost} of " in stats.stderr
        and "use_lcc: false" in stats.stderr
        and "--full" in stats.stderr
    )


FACTS = {
    "report.pdf": (
        "Annika Strand of the Westmoor Weather Office measured the rainfall at Greyhaven Pier."
    ),
    "minutes.docx": (
        "Tomas Ekberg of the Lakeside Rowing Club planned the regatta at Silverlake Bay."
    ),
    "plan.pptx": "Ruth Calder of the Quayside Trust presented the harbour plan for Bellport.",
    "members.xlsx": "Ingrid Moll was treasurer of the Fenwick Choir.",
    "page.html": "Oliver Brandt of the Northgate Museum opened the exhibition in Kestrel Town.",
    "notes/entry.md": "Greta Holm of the Alder Bird Club counted the swifts at Marsh End.",
    "plain.txt": "Hugo Varga of the Cedar Bell Foundry cast the new bell for Stonebridge.",
}


def write_pdf(path: Path, text: str, password: str | None = None) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    if password:
        pdf.set_encryption(owner_password="owner", user_password=password)
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    pdf.multi_cell(0, 8, text)
    pdf.output(str(path))


def write_docx(path: Path, text: str) -> None:
    import docx

    document = docx.Document()
    document.add_heading("Minutes", 1)
    document.add_paragraph(text)
    document.save(path)


def write_mixed_folder(data: Path) -> None:
    from openpyxl import Workbook
    from pptx import Presentation

    (data / "notes").mkdir(parents=True)
    write_pdf(data / "report.pdf", FACTS["report.pdf"])
    write_docx(data / "minutes.docx", FACTS["minutes.docx"])
    slides = Presentation()
    slide = slides.slides.add_slide(slides.slide_layouts[1])
    slide.shapes.title.text = "Harbour plan"
    slide.placeholders[1].text = FACTS["plan.pptx"]
    slides.save(data / "plan.pptx")
    book = Workbook()
    book.active.append(["name", "role"])
    book.active.append(["Ingrid Moll", "treasurer of the Fenwick Choir"])
    book.save(data / "members.xlsx")
    (data / "page.html").write_text(
        f"<html><head><title>Museum</title></head><body><p>{FACTS['page.html']}</p></body></html>"
    )
    (data / "notes" / "entry.md").write_text(f"# Birds\n\n{FACTS['notes/entry.md']}\n")
    (data / "plain.txt").write_text(FACTS["plain.txt"] + "\n")
    (data / "rows.csv").write_text(
        "id,text\n1,Selma Dahl of the Riverside Library catalogued the maps of Oakridge.\n"
        "2,Paul Weber of the Riverside Library repaired the atlas of Oakridge.\n"
    )
    (data / "census.csv").write_text("town,population\nOakridge,1200\nBellport,800\n")
    (data / "log.json").write_text(
        json.dumps([{"text": "Karl Jensen of the Highfield Observatory saw the comet."}])
    )
    write_pdf(data / "locked.pdf", "Secret minutes of Bertil Sand.", password="secret")
    (data / "broken.docx").write_bytes(b"this is not a Word file")


def _build_mixed(work: Path) -> dict:
    write_mixed_folder(work / "data")
    result = run_cli(
        "index", work / "data", "--index-path", work / "index", "--offline", "--format", "json"
    )
    assert result.code == 0, result.stderr
    return result.json()


@pytest.fixture(scope="session")
def mixed_index(
    tmp_path_factory: pytest.TempPathFactory, worker_id: str
) -> tuple[Path, Path, dict]:
    """A folder of every format and its index, built once per run, read-only."""
    work, summary = built_once(tmp_path_factory, worker_id, "mixed", _build_mixed)
    return work / "data", work / "index", summary


def test_a_mixed_folder_indexes_every_readable_file_and_names_the_rest(
    mixed_index: tuple[Path, Path, dict],
) -> None:
    _, root, summary = mixed_index
    titles = set(pd.read_parquet(root / "output" / "documents.parquet")["title"])
    assert titles == {*FACTS, "rows.csv (0)", "rows.csv (1)", "census.csv", "log.json"}
    assert summary["unreadable"] == {
        "locked.pdf": "encrypted (password protected)",
        "broken.docx": "ValueError: not a valid DOCX file",
    }
    assert summary["skipped"]["unreadable"] == 2
    text = run_cli("stats", "--index-path", root)
    assert text.code == 0


async def test_each_format_answers_with_its_file_as_the_source(
    mixed_index: tuple[Path, Path, dict],
) -> None:
    _, root, _ = mixed_index
    async with mcp_session(root, IN_PROCESS) as session:
        for document, fact in FACTS.items():
            person = " ".join(fact.split()[:2])
            result = await session.call_tool(
                "local_search", {"query": f"Who is {person}?", "context_only": True}
            )
            assert not result.is_error, result.content[0].text
            assert document in {
                source["document"] for source in result.structured_content["sources"]
            }, document


def test_updates_work_the_same_for_every_format(
    mixed_index: tuple[Path, Path, dict], tmp_path: Path
) -> None:
    data, built, _ = mixed_index

    root = tmp_path / "index"
    shutil.copytree(built, root, symlinks=True)
    folder = tmp_path / "data"
    shutil.copytree(data, folder)
    write_docx(
        folder / "minutes.docx",
        "Tomas Ekberg handed the Lakeside Rowing Club to Lena Fischer at Silverlake Bay.",
    )
    (folder / "plan.pptx").unlink()
    (folder / "report.pdf").rename(folder / "weather.pdf")
    result = run_cli("index", folder, "--index-path", root, "--offline", "--format", "json")
    assert result.code == 0, result.stderr
    summary = result.json()
    assert (
        summary["documents_updated"],
        summary["documents_deleted"],
        summary["documents_renamed"],
    ) == (1, 1, 1)
    titles = set(pd.read_parquet(root / "output" / "documents.parquet")["title"])
    assert "weather.pdf" in titles and "plan.pptx" not in titles and "report.pdf" not in titles
    found = run_cli(
        "query",
        "Who is Lena Fischer?",
        "--type",
        "local",
        "--context-only",
        "--index-path",
        root,
        "--format",
        "json",
    )
    assert "minutes.docx" in {source["document"] for source in found.json()["sources"]}
