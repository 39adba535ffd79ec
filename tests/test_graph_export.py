"""`graphrag-mcp export` and the graphrag://graph resource: the entity graph for Gephi, Cytoscape
and a browser."""

import colorsys
import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import quote

import networkx as nx
import pandas as pd
import pytest
from PIL import Image

from conftest import REPO, run_cli
from mcp_client import IN_PROCESS, mcp_session

NODE_FIELDS = {"type", "description", "degree", "community", "documents"}


def _entities(root: Path) -> pd.DataFrame:
    return pd.read_parquet(root / "output" / "entities.parquet")


def _check_graph(graph: nx.Graph, root: Path, corpus_titles: set[str]) -> None:
    entities = _entities(root)
    assert set(graph.nodes) == set(entities["title"])
    for name, data in graph.nodes(data=True):
        assert set(data) >= NODE_FIELDS, (name, data)
        assert {title for title in str(data["documents"]).split("; ")} <= corpus_titles, data[
            "documents"
        ]
    relationships = pd.read_parquet(root / "output" / "relationships.parquet")
    assert graph.number_of_edges() == len(
        relationships
    )  # a pair related both ways keeps both relationships
    assert len(
        {
            frozenset(pair)
            for pair in zip(relationships["source"], relationships["target"], strict=True)
        }
    ) < len(relationships)
    assert all({"weight", "description"} <= set(data) for *_, data in graph.edges(data=True))
    degrees = dict(zip(entities["title"], entities["degree"], strict=True))
    assert all(int(data["degree"]) == degrees[name] for name, data in graph.nodes(data=True))
    assert len({data["community"] for _, data in graph.nodes(data=True)}) > 1, (
        "communities are told apart"
    )


@pytest.mark.parametrize("graph_format", ["graphml", "gexf", "json"])
def test_export_writes_a_file_networkx_reads_back(
    built_index: tuple[Path, dict], corpus_titles: set[str], tmp_path: Path, graph_format: str
) -> None:
    root, summary = built_index
    target = tmp_path / f"graph.{graph_format}"
    result = run_cli("export", "--index-path", root, "--format", graph_format, "--output", target)
    assert result.code == 0, result.stderr
    assert f"Wrote {summary['entities']} entities" in result.stdout
    if graph_format == "json":
        graph = nx.node_link_graph(json.loads(target.read_text()), edges="edges")
    else:
        graph = (nx.read_graphml if graph_format == "graphml" else nx.read_gexf)(target)
    _check_graph(graph, root, corpus_titles)


def test_a_relative_output_is_written_where_the_command_runs(
    built_index: tuple[Path, dict], tmp_path: Path
) -> None:
    """`--output` (and the default file) resolve against the caller's folder, and the message names
    the absolute path (graphrag's config loader changes the working directory to the index root)."""
    root, summary = built_index
    for args, written in (
        ([], tmp_path / "entity-graph.graphml"),
        (["--output", "out/g.json", "--format", "json"], tmp_path / "out" / "g.json"),
    ):
        written.parent.mkdir(exist_ok=True)
        result = run_cli("export", "--index-path", root, *args, cwd=tmp_path)
        assert result.code == 0, result.stderr
        assert written.is_file()
        assert result.stdout.strip().endswith(f" to {written}."), result.stdout
    assert not list(root.glob("entity-graph.*")) and not (root / "out").exists()


def test_export_to_a_missing_folder_is_one_error_line(
    built_index: tuple[Path, dict], tmp_path: Path
) -> None:
    root, _ = built_index
    result = run_cli(
        "export", "--index-path", root, "--output", tmp_path / "no" / "such" / "graph.graphml"
    )
    assert result.code == 1
    assert result.stderr.startswith("error: cannot write") and "--output" in result.stderr
    assert "Traceback" not in result.stderr


async def test_graph_resource_is_graphml_of_every_entity(
    built_index: tuple[Path, dict], corpus_titles: set[str], tmp_path: Path
) -> None:
    root, _ = built_index
    async with mcp_session(root, IN_PROCESS) as session:
        contents = (await session.read_resource("graphrag://graph")).contents
    assert contents[0].mime_type == "application/graphml+xml"
    (tmp_path / "graph.graphml").write_text(contents[0].text)
    _check_graph(nx.read_graphml(tmp_path / "graph.graphml"), root, corpus_titles)


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if found := shutil.which(name):
            return found
    if os.environ.get("CI"):
        pytest.fail("CI needs Chromium for the graph page test (.ci/run installs it with apt-get)")
    pytest.skip("no Chromium here (apt-get install chromium)")


def _headless(page: str, *args: str) -> str:
    process = subprocess.run(
        [
            _chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
            "--virtual-time-budget=5000",
            "--window-size=1200,800",
            *args,
            page,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return process.stdout


@pytest.mark.e2e  # headless Chromium
def test_html_page_draws_every_entity_offline_in_headless_chromium(
    built_index: tuple[Path, dict], tmp_path: Path
) -> None:
    root, summary = built_index
    page = tmp_path / "graph.html"
    assert run_cli("export", "--index-path", root, "--format", "html", "--output", page).code == 0
    html = page.read_text()
    assert (
        "http://" not in html.replace("http://www.w3.org/2000/svg", "") and "https://" not in html
    ), "works offline"

    dom = _headless(page.as_uri(), "--dump-dom")
    assert dom.count('class="node') == summary["entities"], "one circle per entity"
    assert f"{summary['entities']} entities, " in dom

    entities = _entities(root).sort_values("degree", ascending=False)
    titles = [str(title) for title in entities["title"]]
    entity = next(
        row
        for row in entities.itertuples()
        if sum(row.title.lower() in other.lower() for other in titles) == 1 and "&" not in row.title
    )
    searched = _headless(f"{page.as_uri()}?q={quote(entity.title)}", "--dump-dom")
    assert f"1 of {summary['entities']} entities match" in searched
    assert f"<h2>{entity.title}</h2>" in searched, "the entity's panel opens"
    assert "Documents (" in searched

    shot = tmp_path / "graph.png"
    _headless(page.as_uri(), f"--screenshot={shot}")
    with Image.open(shot) as image:
        colours = image.convert("RGB").getcolors(maxcolors=1_000_000) or []
    communities = pd.read_parquet(root / "output" / "communities.parquet").sort_values(
        "level", ascending=False
    )
    broadest = {
        entity: int(row.community) for row in communities.itertuples() for entity in row.entity_ids
    }
    expected = {community: _page_colour(community) for community in set(broadest.values())}
    drawn = {
        community
        for community, rgb in expected.items()
        if sum(
            count
            for count, colour in colours
            if max(abs(a - b) for a, b in zip(colour, rgb, strict=True)) <= 2
        )
        >= 200
    }
    assert len(expected) >= 2 and drawn == set(expected), (
        "every broadest community drawn in its own colour"
    )


def _page_colour(community: int) -> tuple[int, int, int]:
    """The page's `hsl(community * 137.508 mod 360, 65%, 48%)` as RGB."""
    red, green, blue = colorsys.hls_to_rgb((community * 137.508) % 360 / 360, 0.48, 0.65)
    return round(255 * red), round(255 * green), round(255 * blue)


def _page_state(page: Path) -> tuple[str, int, int]:
    """The page's DOM in headless Chromium at the default zoom, with its shown labels and
    overlapping label pairs (measured by the page on the drawn labels' boxes)."""
    dom = _headless(page.as_uri(), "--dump-dom")
    shown = re.search(r'data-labels-shown="([0-9]+)"', dom)
    overlaps = re.search(r'data-label-overlaps="([0-9]+)"', dom)
    assert shown and overlaps, "the page measures its labels"
    return dom, int(shown.group(1)), int(overlaps.group(1))


@pytest.mark.e2e  # headless Chromium
@pytest.mark.parametrize("corpus", ["fixtures", "dulce"])
def test_html_page_labels_do_not_overlap_and_a_legend_names_types_and_communities(
    built_index: tuple[Path, dict], tmp_path: Path, corpus: str
) -> None:
    """At the default zoom (the whole graph fitted to the window) no two shown labels overlap, and
    the most connected entities are labelled; the legend lists the entity types and the communities
    by report title."""
    root = built_index[0]
    if corpus == "dulce":
        dulce = REPO.parent / "shared" / "corpora" / "dulce"
        if not dulce.is_dir():
            if os.environ.get("CI"):
                pytest.fail(f"CI runs with ../shared beside the repository: {dulce} is missing")
            pytest.skip(f"no {dulce}")
        data = tmp_path / "dulce"
        shutil.copytree(dulce, data, ignore=shutil.ignore_patterns("*.md"))
        root = tmp_path / "index"
        assert run_cli("index", data, "--index-path", root, "--offline").code == 0
    page = tmp_path / "graph.html"
    assert run_cli("export", "--index-path", root, "--format", "html", "--output", page).code == 0

    dom, shown, overlaps = _page_state(page)

    entities = _entities(root)
    assert overlaps == 0
    assert shown >= min(len(entities), 6), "the most connected entities are labelled"
    top = str(entities.sort_values("degree", ascending=False)["title"].iloc[0])
    label = re.search(rf"<text([^>]*)>{re.escape(html.escape(top, quote=False))}</text>", dom)
    assert label and "hidden" not in label.group(1), "the most connected entity's label is shown"
    legend = dom[dom.index('id="legend"') :]
    assert "Entity types" in legend and all(f"{kind} (" in legend for kind in set(entities["type"]))
    reports = pd.read_parquet(root / "output" / "community_reports.parquet")
    broadest = reports[reports["level"] == reports["level"].min()]
    assert all(html.escape(str(title), quote=False) in legend for title in broadest["title"]), (
        "communities by title"
    )


@pytest.mark.e2e  # headless Chromium
def test_html_page_zoomed_in_colours_sub_communities(
    built_index: tuple[Path, dict], tmp_path: Path
) -> None:
    """Zoomed in (`?zoom=4`), an entity whose finest community is not its broadest takes a shade of
    its broadest community's hue; at the default zoom every entity has its broadest community's
    colour."""
    root = built_index[0]
    page = tmp_path / "graph.html"
    assert run_cli("export", "--index-path", root, "--format", "html", "--output", page).code == 0
    communities = pd.read_parquet(root / "output" / "communities.parquet")
    levels = communities.sort_values("level")
    finest = {
        entity: int(row.community) for row in levels.itertuples() for entity in row.entity_ids
    }
    broadest = {
        entity: int(row.community) for row in levels[::-1].itertuples() for entity in row.entity_ids
    }
    titles = dict(zip(_entities(root)["id"], _entities(root)["title"], strict=True))
    split = {titles[entity] for entity in finest if finest[entity] != broadest[entity]}
    assert split, "the fixtures index has communities below the broadest"

    def fills(query: str) -> dict[str, str]:
        dom = _headless(f"{page.as_uri()}{query}", "--dump-dom")
        return {
            html.unescape(name): fill
            for fill, name in re.findall(r'<circle[^>]*fill="([^"]+)"[^>]*data-name="([^"]+)"', dom)
        }

    default, zoomed = fills(""), fills("?zoom=4")
    assert all(fill.endswith(", 48%)") for fill in default.values())
    assert {name for name, fill in zoomed.items() if fill != default[name]} == split
