"""A job as a person names it: as sacct prints it (JobID: `123`, an array task `123_4`, a
heterogeneous job's component `123+1`) or its JobIDRaw (`127`, the array task's own number)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from flows.core.errors import UsageError

JOB_ID = re.compile(r"(?P<job>[0-9]{1,18})(?:(?P<kind>[_+])(?P<part>[0-9]{1,9}))?")
JOB_ID_FORMS = "a job id (123), an array task (123_4), a heterogeneous job's component (123+1) or a JobIDRaw"


@dataclass(frozen=True)
class JobQuery:
    """Which attempts a job id names: `exact` matches JobID or JobIDRaw; a bare number also names
    every task of the array or every component of the heterogeneous job it is the id of."""

    text: str
    whole_job: bool  # a bare number: its array's tasks and het components too

    @property
    def task_prefixes(self) -> tuple[str, ...]:
        """How the JobIDs of a bare id's array tasks and het components begin."""
        return (f"{self.text}_", f"{self.text}+") if self.whole_job else ()

    def names(self, job_id: str, job_id_raw: str) -> bool:
        """Whether an attempt of JobID `job_id` and JobIDRaw `job_id_raw` is of this job."""
        return self.text in (job_id, job_id_raw) or job_id.startswith(self.task_prefixes or ("\0",))


def job_query(text: str) -> JobQuery:
    """`text` as a JobQuery; UsageError (exit 2) when it is none of the forms."""
    found = JOB_ID.fullmatch(text.strip())
    if not found:
        shown = text if text.isprintable() and len(text) <= 40 else repr(text[:40])
        raise UsageError(f"--job {shown}: not a Slurm job id: give {JOB_ID_FORMS}")
    return JobQuery(found.group(0), whole_job=found.group("kind") is None)
