"""The hostile-input corpus's one convention (issue 21): every case says which class of outcome it must have.

    @hostile(Outcome.QUARANTINE)
    def test_a_completed_row_without_start_is_quarantined(...): ...

or, in a parametrised table, `pytest.param(..., marks=hostile(Outcome.ERROR))`. A case asserts its
class (the error names the file, line and field or the config key; the quarantine is counted with
file, line, field and reason; the figure equals the one computed by hand) and that nothing else changed
(the other rows land, earlier results are kept). The run's summary counts the passed cases by class.
"""

from enum import StrEnum

import pytest


class Outcome(StrEnum):
    ERROR = "clear error"  # refused with a message naming the file, line and field (or the config key)
    QUARANTINE = "counted quarantine"  # the bad row or file set aside, counted, the rest landed
    FIGURE = "correct figure"  # accepted, and the figure is the right one


def hostile(outcome: Outcome) -> pytest.MarkDecorator:
    return pytest.mark.hostile(outcome.value)
