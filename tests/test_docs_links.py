"""The README stays a newcomer's front door, and no link from it or from docs/ points nowhere."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
# A markdown link [text](target) that is not a web address or an anchor alone.
LINK = re.compile(r"\]\((?!https?://|#|mailto:)([^)\s]+)\)")
# A path of this repository named in code quotes, such as `docs/feed.md` or `chalicelib/store/feed.py`.
NAMED_PATH = re.compile(r"`((?:docs|bench|chalicelib|tests|examples)/[\w./-]+\.(?:md|py|json|ts))`")


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_and_named_path_exists(document):
    text = document.read_text(encoding="utf-8")
    broken = [t for t in LINK.findall(text) if not (document.parent / t.split("#", 1)[0]).exists()]
    broken += [p for p in NAMED_PATH.findall(text) if not (ROOT / p).exists()]
    assert broken == []


def test_the_readme_is_read_in_ten_minutes():
    assert len((ROOT / "README.md").read_bytes()) <= 12 * 1024


def test_every_document_in_docs_is_linked_from_the_readme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert [p.name for p in (ROOT / "docs").glob("*.md") if f"(docs/{p.name})" not in readme] == []
