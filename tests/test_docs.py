"""The README is a user's guide (at most 300 lines, no line over 200 characters), its example
config loads, and every relative link in it and in docs/ points to a file that exists, as does
every file of the repository they name (`flows/.../x.py`, `dbt_project/.../y.sql`)."""

import re
from pathlib import Path

import pytest

from flows.config.file import load_config

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
PAGES = [README, *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")  # [text](target)
TOP = "flows|simulator|dbt_project|tests|bench|templates|expectations|spark_conf|docs"
NAMED_FILE = re.compile(rf"(?<![\w/.])((?:{TOP})/[\w./-]*\.(?:py|md|sql|csv|json|yml|yaml|j2|toml|properties))")


def test_the_readme_is_a_short_guide():
    lines = README.read_text().splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines; move the detail into docs/"
    long = [n for n, line in enumerate(lines, 1) if len(line) > 200]
    assert not long, f"README.md lines over 200 characters: {long}"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_every_relative_link_points_to_a_file(page):
    targets = LINK.findall(page.read_text())
    relative = [t for t in targets if not re.match(r"[a-z][a-z0-9+.-]*:", t) and not t.startswith("#")]
    missing = [t for t in relative if not (page.parent / t.split("#", 1)[0]).exists()]
    assert not missing, f"{page.relative_to(REPO)} links to files that do not exist: {missing}"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_every_file_a_page_names_exists(page):
    """A module moved or renamed is a page to correct (paths are from the repository's root)."""
    missing = sorted({path for path in NAMED_FILE.findall(page.read_text()) if not (REPO / path).exists()})
    assert not missing, f"{page.relative_to(REPO)} names files that do not exist: {missing}"


def test_the_readme_links_every_docs_page():
    text = README.read_text()
    unlinked = [p.name for p in PAGES[1:] if f"(docs/{p.name})" not in text]
    assert not unlinked, f"docs pages the README does not link: {unlinked}"


def test_the_readme_example_config_loads(tmp_path):
    (example,) = [block for block in re.findall(r"```toml\n(.*?)```", README.read_text(), re.S) if "cluster =" in block]
    config_path = tmp_path / "rsc1.toml"
    config_path.write_text("\n".join(line.strip() for line in example.splitlines()) + "\n")
    config = load_config(config_path)
    assert config.cluster == "rsc1" and [s.kind for s in config.sources][0] == "sacct_psv"
    assert config.email is not None


def test_operations_says_what_run_does_with_a_month_that_has_not_ended():
    """`run` refuses the current month without --partial; a month over by the clock whose records
    were taken before its end is built and marked partial, as docs/operations.md says."""
    from datetime import UTC, datetime

    from flows.core.months import Month, MonthNotEndedError, observed_end, reportable

    now = datetime(2026, 11, 29, 12, tzinfo=UTC)
    with pytest.raises(MonthNotEndedError):
        reportable(Month.parse("2026-11"), now=now)
    october = reportable(Month.parse("2026-10"), now=now)  # over: no --partial asked
    assert observed_end(october, datetime(2026, 10, 16, tzinfo=UTC)) < october.end  # a partial month
    text = " ".join((REPO / "docs" / "operations.md").read_text().split())
    assert (
        "`run` refuses a month that has not ended by the clock (the current month; exit 2) unless `--partial`" in text
    )
    assert "is built without `--partial` and marked the same way" in text
