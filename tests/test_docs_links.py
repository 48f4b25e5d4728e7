"""The documentation's links and test references point at things that exist.

* Every relative link (``[text](path)``, ``![alt](path)``, with or without ``#anchor``) in
  ``README.md`` and ``docs/*.md`` names an existing file, and an anchor names a heading of
  that file.
* Every ``tests/…py::test_name`` cited in the docs (RELIABILITY.md cites one per guarantee)
  is a test function in that file.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
TEST_REF = re.compile(r"(tests/[\w/]+\.py)::(test_\w+)")
FENCE = re.compile(r"^[ \t]*(```|~~~).*?^[ \t]*\1", re.M | re.S)
CODE_SPAN = re.compile(r"`[^`\n]*`")


def prose(text: str) -> str:
    """The page without code blocks and code spans (examples there are not links)."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to dashes."""
    text = re.sub(r"[`*_~]|<[^>]+>", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    counts: dict[str, int] = {}
    for line in FENCE.sub("", path.read_text(encoding="utf-8")).splitlines():
        match = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if match:
            base = slug(match.group(1))
            n = counts.get(base, 0)
            counts[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
    return found


def relative_links(path: Path) -> list[str]:
    links = LINK.findall(prose(path.read_text(encoding="utf-8")))
    return [link for link in links
            if not re.match(r"^[a-z][a-z0-9+.-]*:", link, re.I)]  # http:, mailto: …


def page_id(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_the_guide_has_its_pages():
    names = {p.name for p in PAGES}
    assert {"README.md", "CONCEPTS.md", "CONFIGURATION.md", "TROUBLESHOOTING.md",
            "RELIABILITY.md", "PERFORMANCE.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_relative_link_points_at_an_existing_file(page):
    broken = []
    for link in relative_links(page):
        target, _, anchor = link.partition("#")
        file = (page.parent / target).resolve() if target else page
        if not file.exists():
            broken.append(f"{link}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{link}: no heading '#{anchor}' in {file.name}")
    assert broken == []


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_cited_test_exists(page):
    missing = []
    for file, name in TEST_REF.findall(page.read_text(encoding="utf-8")):
        path = ROOT / file
        if not path.is_file():
            missing.append(f"{file}: no such file")
        elif not re.search(rf"^(async )?def {name}\(", path.read_text(encoding="utf-8"),
                           re.M):
            missing.append(f"{file}::{name}: no such test")
    assert missing == []


def test_the_link_checker_sees_links_and_anchors(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# A Title: here\n\n## The `code` part\n\n"
                    "[ok](page.md#a-title-here) ![img](missing.svg)\n"
                    "```\n[in code](nowhere.md)\n```\n[web](https://example.com)\n"
                    "* item\n  ```text\n  [indented](nowhere.md)\n  ```\n`[span](x.md)`\n",
                    encoding="utf-8")
    assert relative_links(page) == ["page.md#a-title-here", "missing.svg"]
    assert anchors(page) == {"a-title-here", "the-code-part"}
