"""The README stays a newcomer's page (issue 16): short, and every link in it leads somewhere."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_the_readme_fits_on_a_newcomers_screenful():
    assert len((REPO / "README.md").read_text().splitlines()) <= 150


def test_every_local_link_in_the_readme_and_docs_exists():
    for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", page.read_text()):
            if not target.startswith(("http://", "https://")):
                assert (page.parent / target).exists(), f"{page.name} links {target}, which does not exist"
