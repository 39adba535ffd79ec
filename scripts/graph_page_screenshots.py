"""Screenshots of the graph page (`export --format html`) for docs/images/: the fixtures index, the
same with `?q=OLD BESSIE`, and a 300-document index, each built offline, in headless Chromium at
1400x900.

Run from the repository root with the package installed:
    python scripts/graph_page_screenshots.py
"""

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
IMAGES = REPO / "docs" / "images"
sys.path.insert(0, str(REPO / "tests" / "benchmarks"))


def cli(*args: str | Path) -> None:
    """graphrag-mcp as a user runs it."""
    command = [sys.executable, "-m", "graphrag_mcp_server", *map(str, args)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)


def screenshot(page: Path, query: str, target: Path) -> None:
    """The page in headless Chromium at 1400x900 (software WebGL), written as PNG."""
    browser = shutil.which("chromium") or shutil.which("google-chrome") or "chromium"
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--enable-unsafe-swiftshader"]
    flags += ["--hide-scrollbars", "--virtual-time-budget=5000", "--window-size=1400,900"]
    subprocess.run(
        [browser, *flags, f"--screenshot={target}", page.as_uri() + query],
        check=True,
        capture_output=True,
    )
    from PIL import Image

    with Image.open(target) as image:  # 256 colours: a third of the bytes, the same to the eye
        image.convert("RGB").quantize(256).save(target, optimize=True)
    print(f"wrote {target.relative_to(REPO)}")


def main() -> None:
    from corpora import recurring_corpus

    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        recurring_corpus(work / "docs300", 300)
        for name, data in (("fixtures", REPO / "fixtures" / "corpus"), ("300", work / "docs300")):
            root, page = work / f"index-{name}", work / f"{name}.html"
            cli("index", data, "--index-path", root, "--offline")
            cli("export", "--index-path", root, "--format", "html", "--output", page)
            if name == "fixtures":
                screenshot(page, "", IMAGES / "graph-fixtures.png")
                screenshot(page, "?q=OLD%20BESSIE", IMAGES / "graph-fixtures-search.png")
            else:
                screenshot(page, "", IMAGES / "graph-300-documents.png")


if __name__ == "__main__":
    main()
