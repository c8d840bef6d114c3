"""What a delivery sends: a cluster's month or a study, typed, so that delivery never parses a string
to tell them apart. Its `key` names it in the sent-log and in the message's subject line, as before
the subject was typed (a sent-log written then is read the same)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from flows.core.months import Month


@dataclass(frozen=True)
class MonthSubject:
    """A cluster's month: its report is reports/<cluster>/<month>/, and the Pushgateway gets its figures."""

    month: Month

    @property
    def key(self) -> str:
        return str(self.month)

    def __str__(self) -> str:
        return self.key


@dataclass(frozen=True)
class StudySubject:
    """A study of clusters over first..last, whose report is `directory` once in place (under
    <reports>/studies/); the Pushgateway, which holds one month per cluster, does not get it."""

    clusters: tuple[str, ...]
    first: Month
    last: Month
    directory: Path

    @property
    def key(self) -> str:
        return f"study {'+'.join(self.clusters)} {self.first}..{self.last}"

    def __str__(self) -> str:
        return self.key


Subject = MonthSubject | StudySubject
