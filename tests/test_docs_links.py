"""Every relative link of README.md and docs/*.md resolves: the file exists in the repository and, for a
link into a markdown file with ``#anchor``, that file has a heading of that anchor (GitHub's rule:
lower case, punctuation dropped, spaces to hyphens)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"```.*?```", re.S)
CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)
EXTERNAL = ("http://", "https://", "mailto:")


def links(page: Path) -> list[str]:
    """The link targets of a page, code spans and blocks left out."""
    return LINK.findall(CODE.sub("", page.read_text()))


def anchors(page: Path) -> set[str]:
    """The anchors of a markdown page's headings."""
    found = set()
    for line in FENCE.sub("", page.read_text()).splitlines():
        if match := re.match(r"#{1,6}\s+(.*?)\s*#*$", line):
            found.add(re.sub(r"[^\w\- ]", "", match.group(1).lower()).replace(" ", "-"))
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in links(page):
        if target.startswith(EXTERNAL):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists() or REPO not in (file, *file.parents):
            broken.append(target)
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(target)
    assert broken == []


def test_the_pages_link_to_something() -> None:
    assert len(links(REPO / "README.md")) > 10  # the link pattern still finds the README's links
