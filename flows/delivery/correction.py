"""What a correction compares and says: the figures a message shows, and what they were made from.

A month already sent is sent again only when a figure its message shows changed: the figures are
read from the email's HTML as a reader sees it (every block of text and every table row, outside the
methodology, the parameters and the rebuild command), each keyed by its section and its wording with
the numbers taken out, so a reworded sentence is no change and a changed number is. The sent-log
keeps them with each send (SentRecord.shown), and with them what the figures were made from
(SentRecord.basis: the months built before it, each input's record count and SHA-256 as landed, the
failure taxonomy's digest, the parameters in force, the tool's version): a correction names the
cause from what differs there and lists the changed figures with their old and new values.
"""

from __future__ import annotations

import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from flows import DBT_PROJECT_DIR
from flows.figures.document import MonthDocument, StudyDocument, figures_of

# sections whose text says how the figures were made, not what they are
NOT_SHOWN_SECTIONS = ("Methodology", "How to reproduce")
# a paragraph of this class says the same within a section (the paper's figure it reproduces, how
# a figure is computed): its numbers are no figures, and a version that adds or rewords one sends nothing
METHOD_CLASS = "method"
# a number as the report prints it: 1,234 / 0.53 / -40% / 2026-08 / 00:00
NUMBER = re.compile(r"(?<![\w.])[-+]?\d(?:[\d,.:-]*\d)?%?")
BLOCK_TAGS = {"p", "div", "li", "h1", "h2", "h3", "h4", "table", "tr", "br", "section", "ul", "ol"}
INLINE_TAGS = {"sub", "sup", "a", "b", "i", "em", "strong", "abbr", "code"}  # part of a word: "r<sub>f</sub>"
SKIP_TAGS = {"style", "script", "title", "head"}
CONTEXT = 40  # characters of text kept either side of a changed number
MAX_LISTED = 12  # changed figures listed in a notice; the rest counted


class _Blocks(HTMLParser):
    """The visible text of an HTML report as blocks: a paragraph, a headline card, a table row
    (its cells joined by " | "), each under the h2 heading it follows."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[tuple[str, str]] = []  # (section, text)
        self.section = ""
        self.text: list[str] = []
        self.skip = 0
        self.method = 0  # inside a paragraph of METHOD_CLASS
        self.card = 0  # depth inside a headline card: its label, value and unit are one block
        self.heading: list[str] | None = None

    def _flush(self) -> None:
        text = re.sub(r"\s+", " ", "".join(self.text)).strip(" |")
        self.text = []
        if text:
            self.blocks.append((self.section, text))

    def handle_starttag(self, tag, attrs):
        if tag in SKIP_TAGS or (tag == "p" and METHOD_CLASS in (dict(attrs).get("class") or "").split()):
            self.method += tag == "p"
            self.skip += 1
        if tag not in INLINE_TAGS:
            self.text.append(" ")  # a cell's note in its own element is a word of its own
        if self.card:
            self.card += tag in ("td", "div")
            self.text.append(" ")
            return
        if tag == "td" and "card" in (dict(attrs).get("class") or "").split():
            self._flush()
            self.card = 1
            return
        if tag in BLOCK_TAGS:
            self._flush()
        if tag == "h2":
            self.heading = []
        if tag in ("td", "th"):
            self.text.append(" | ")

    def handle_endtag(self, tag):
        if tag in SKIP_TAGS or (tag == "p" and self.method):
            self.method -= tag == "p"
            self.skip -= 1
        if tag not in INLINE_TAGS:
            self.text.append(" ")
        if self.card:
            self.card -= tag in ("td", "div")
            if not self.card:
                self._flush()
            return
        if tag == "h2" and self.heading is not None:
            self.section, self.heading = re.sub(r"\s+", " ", "".join(self.heading)).strip(), None
        if tag in BLOCK_TAGS:
            self._flush()

    def handle_data(self, data):
        if self.skip:
            return
        self.text.append(data)
        if self.heading is not None:
            self.heading.append(data)


def shown_figures(html: str) -> dict[str, str]:
    """The blocks of the message's HTML that show figures (a number in them), keyed by their section
    and their wording with the numbers masked (a table row: its first cell as written, the others
    masked); a second block of the same key gets " #2". A table row's text names its section
    ("Trend: 3 months | ...")."""
    parser = _Blocks()
    parser.feed(html)
    parser.close()
    parser._flush()
    shown: dict[str, str] = {}
    for section, text in parser.blocks:
        if section in NOT_SHOWN_SECTIONS or not NUMBER.search(text):
            continue
        first, bar, rest = text.partition(" | ")  # a table row: its first cell names it as written
        key = f"{section} § {first} | {NUMBER.sub('#', rest)}" if bar else f"{section} § {NUMBER.sub('#', text)}"
        n, unique = 1, key
        while unique in shown:
            n += 1
            unique = f"{key} #{n}"
        shown[unique] = f"{section}: {text}" if bar and section else text
    return shown


def lines_shown(lines: list[str]) -> dict[str, str]:
    """The figures of a message made of lines (a chat message's), keyed as shown_figures keys them."""
    shown: dict[str, str] = {}
    for line in lines:
        if NUMBER.search(line):
            key = f" § {NUMBER.sub('#', line)}"
            shown[key if key not in shown else f"{key} #{len(shown)}"] = line
    return shown


def numbers(text: str) -> list[str]:
    return NUMBER.findall(text)


def _section(key: str) -> str:
    return key.partition(" § ")[0]


def _row_name(section: str, text: str) -> str | None:
    """A table row's first cell (its name as written), None for a block that is no row."""
    first, bar, _ = text.removeprefix(f"{section}: ").partition(" | ")
    return first if bar and text.startswith(f"{section}: ") else None


def _within(shown: list[str], now: list[str]) -> bool:
    """Whether the numbers `shown` are all in `now`, in the same order (`now` may hold more between)."""
    rest = iter(now)
    return all(number in rest for number in shown)


def changed_figures(old: dict[str, str], new: dict[str, str]) -> list[tuple[str, str]]:
    """(old text, new text) of each figure shown that changed; "" for one no longer or newly shown.
    A block whose wording changed but whose numbers did not is no change; a reworded block is
    paired with one of its own section. A section the earlier message did not have at all (a figure
    a newer version of the tool added) is no change: nothing the reader was told changed; nor is a
    table row that says more (a reader's notes with the counts a newer reader keeps, issue 50), each
    number it showed still there, in order."""
    changes = [(old[key], new[key]) for key in old if key in new and numbers(old[key]) != numbers(new[key])]
    gone = [(_section(key), text) for key, text in old.items() if key not in new]
    sections_shown = {_section(key) for key in old}
    came = [(_section(key), text) for key, text in new.items() if key not in old and _section(key) in sections_shown]
    for section, text in list(gone):  # reworded (or moved) with the same numbers
        same = next((c for c in came if c[0] == section and numbers(c[1]) == numbers(text)), None)
        if same is not None:
            gone.remove((section, text))
            came.remove(same)
    for section, text in list(gone):  # a table row that says more: every number it showed, in order, and more
        row = _row_name(section, text)
        more = next((c for c in came if row and _row_name(*c) == row and _within(numbers(text), numbers(c[1]))), None)
        if more is not None:
            gone.remove((section, text))
            came.remove(more)
    for section, text in list(gone):  # reworded with changed numbers: paired within its section
        other = next((c for c in came if c[0] == section), None)
        if other is not None:
            gone.remove((section, text))
            came.remove(other)
            changes.append((text, other[1]))
    changes += [(text, "") for _, text in gone] + [("", text) for _, text in came]
    return changes


def describe_change(old: str, new: str) -> str:
    """One changed figure in a few words: the block's own text with the numbers that changed as
    "old → new" and the text far from them left out, e.g. "Infrastructure failures 4 → 6 of 6,752
    → 6,754 attempts"."""
    if not old:
        return f"now shown: {_short(new)}"
    if not new:
        return f"no longer shown: {_short(old)}"
    if NUMBER.sub("#", old) != NUMBER.sub("#", new):
        return f"{_short(old, 110)} → {_short(new, 110)}"
    label, bar, rest = new.partition(" | ")  # a table row: its section and first cell name it
    if bar and old.startswith(label + bar):
        return f"{label}: {_numbers_changed(old[len(label + bar) :], rest)}".replace(" | ", ", ")
    return _numbers_changed(old, new)


def _numbers_changed(old: str, new: str) -> str:
    """`new` with each number that changed as "old → new", the text far from them left out."""
    parts, olds, news = NUMBER.split(new), numbers(old), numbers(new)
    pieces = [(parts[0], False)]
    for before, after, rest in zip(olds, news, parts[1:], strict=True):
        pieces += [(after if before == after else f"{before} → {after}", before != after), (rest, False)]
    changed = [i for i, (_, is_change) in enumerate(pieces) if is_change]
    text = ""
    for i, (piece, _) in enumerate(pieces):
        near = [c - i for c in changed if abs(c - i) <= 2]
        if i == 0 and len(piece) <= 2 * CONTEXT:  # the block's label
            text += piece
        elif not near:
            text += "" if text.endswith(" … ") else " … "
        elif i in changed or len(piece) <= CONTEXT:
            text += piece
        elif min(near) < 0:  # after a change: its first words
            text += piece[:CONTEXT].rsplit(" ", 1)[0] + " … "
        else:  # before a change: its last words
            text += " … " + piece[-CONTEXT:].split(" ", 1)[-1]
    return _short(re.sub(r"\s+", " ", text.replace(" …  … ", " … ")).strip(" …"), 200)


def _short(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def taxonomy_digest() -> str:
    """A digest of the failure taxonomy in force (the dbt seeds: rules, categories, size buckets)."""
    digest = hashlib.sha256()
    for path in sorted((DBT_PROJECT_DIR / "seeds").glob("*.csv")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


class InputBasis(BaseModel):
    """An input as the figures were made from it: its record count and SHA-256 as landed."""

    records: int | None = None
    sha256: str | None = None


class Basis(BaseModel):
    """What a report's figures were made from (a sent-log record's `basis`; a record written before a
    part of it was kept lacks that part): the months built before it (month -> digest of its trend
    row), each input, the failure taxonomy's digest, the parameters in force, the tool's version."""

    model_config = ConfigDict(extra="ignore")

    months_built: dict[str, str] = {}
    inputs: dict[str, InputBasis] = {}
    taxonomy: str | None = None
    parameters: dict = {}
    tool_version: str | None = None


def basis(document: MonthDocument | StudyDocument) -> dict:
    """What a report's figures were made from, for a later correction to name what changed (a study's:
    the taxonomy and its tool's version only)."""
    made = Basis(taxonomy=taxonomy_digest(), tool_version=document.reproduce.tool_version)
    if isinstance(document, MonthDocument):
        made.months_built = {
            row.month: _digest(figures_of(row)) for row in document.history.monthly if row.month < document.month
        }
        made.inputs = {source: InputBasis(records=i.records, sha256=i.sha256) for source, i in document.inputs.items()}
        made.parameters = figures_of(document.parameters)
    return made.model_dump()


def _digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def causes(sent: dict, now: dict) -> list[str]:
    """What differs between the basis of the figures sent (`sent`) and of the new ones (`now`), in
    words (sent-log records' `basis`, read as Basis)."""
    if not sent:
        return []
    old, new = Basis.model_validate(sent), Basis.model_validate(now)
    found = []
    built, rebuilt = _earlier_months(old.months_built, new.months_built)
    if built:
        found.append(f"{_and(built)} {'was' if len(built) == 1 else 'were'} built for the first time")
    if rebuilt:
        found.append(f"{_and(rebuilt)} {'was' if len(rebuilt) == 1 else 'were'} rebuilt with changed figures")
    found += _input_changes(old.inputs, new.inputs)
    if old.taxonomy and old.taxonomy != new.taxonomy:
        found.append("the failure taxonomy was edited")
    changed = _changed_keys(old.parameters, new.parameters)
    if changed:
        found.append(f"the config's [analysis] changed ({'; '.join(changed)})")
    if old.tool_version and old.tool_version != new.tool_version:
        found.append(f"the tool was updated ({old.tool_version} → {new.tool_version})")
    return found


def _earlier_months(old: dict, new: dict) -> tuple[list[str], list[str]]:
    built = sorted(m for m in new if m not in old)
    rebuilt = sorted(m for m in new if m in old and old[m] != new[m])
    return built, rebuilt


def _input_changes(old: dict[str, InputBasis], new: dict[str, InputBasis]) -> list[str]:
    found = []
    for source in sorted(set(old) | set(new)):
        before, after = old.get(source), new.get(source)
        if before is None:
            found.append(f"a new input, {source}, was read ({_records(after)})")
        elif after is None:
            found.append(f"input {source} was no longer read")
        elif before.records != after.records:
            found.append(f"the landed {source} records changed ({_records(before)} → {_records(after)}: late records?)")
        elif before.sha256 != after.sha256:
            found.append(f"the landed {source} file changed (same {_records(after)}, a new SHA-256)")
    return found


def _records(stats: InputBasis | None) -> str:
    count = stats.records if stats is not None else None
    return "records not counted" if count is None else f"{count:,} record{'' if count == 1 else 's'}"


def _changed_keys(old: dict, new: dict) -> list[str]:
    keys = sorted(set(old) | set(new))
    return [f"{key} {_value(old.get(key))} → {_value(new.get(key))}" for key in keys if old.get(key) != new.get(key)]


def _value(value) -> str:
    return "(none)" if value is None or value == "" else str(value)


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def notice(sent_on: str, cause: list[str], changes: list[str], basis_known: bool = True) -> str:
    """A correction's notice: what it replaces, why, and each changed figure (describe_change)."""
    if cause:
        why = f"because {'; '.join(cause)}"
    elif basis_known:
        why = "rebuilt from the same inputs, failure taxonomy and parameters"
    else:
        why = "rebuilt (what its figures were made from was not recorded when it was sent)"
    listed = changes[:MAX_LISTED]
    more = len(changes) - len(listed)
    figures = "; ".join(listed) + (f"; and {more} more" if more else "")
    return f"Correction: this report replaces the one sent on {sent_on[:10]}, {why}. " + (
        f"Changed figures: {figures}." if figures else "Its figures changed."
    )


def read_shown(report_dir: Path) -> dict[str, str]:
    path = Path(report_dir) / "email.html"
    return shown_figures(path.read_text()) if path.is_file() else {}
