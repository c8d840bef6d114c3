"""Output directories are swapped in whole; what a killed run left behind is cleared or restored."""

import threading
from pathlib import Path

import pytest

from flows.core.atomic import replace_dir_atomically, staged_replacement


def write(text: str):
    return lambda tmp: (tmp / "report.html").write_text(text)


def test_a_failed_fill_leaves_the_previous_result(tmp_path: Path):
    target = tmp_path / "2026-10"
    replace_dir_atomically(target, write("good"))

    def fail(tmp: Path) -> None:
        (tmp / "report.html").write_text("half")
        raise RuntimeError("killed mid-render")

    with pytest.raises(RuntimeError):
        replace_dir_atomically(target, fail)
    assert (target / "report.html").read_text() == "good"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["2026-10"]


def test_an_exception_named_in_keep_on_still_swaps_the_new_result_in(tmp_path: Path):
    target = tmp_path / "2026-10"
    replace_dir_atomically(target, write("good"))
    with pytest.raises(LookupError):
        with staged_replacement(target, keep_on=(LookupError,)) as tmp:
            write("new")(tmp)
            raise KeyError("a channel failed after the report went out")
    assert (target / "report.html").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["2026-10"]


def test_leftovers_of_a_killed_run_are_cleared(tmp_path: Path):
    target = tmp_path / "2026-10"
    replace_dir_atomically(target, write("good"))
    (tmp_path / ".2026-10.tmp-4242").mkdir()  # killed while filling
    (tmp_path / ".2026-10.old-4243").mkdir()  # killed after its swap, before removing the old copy
    replace_dir_atomically(target, write("new"))
    assert (target / "report.html").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["2026-10"]


def test_a_run_killed_between_the_two_renames_gets_its_last_result_back(tmp_path: Path):
    target = tmp_path / "2026-10"
    replace_dir_atomically(target, write("good"))
    target.rename(tmp_path / ".2026-10.old-4242")  # the previous run died right here
    (tmp_path / ".2026-10.tmp-4242").mkdir()

    def fail(tmp: Path) -> None:
        raise RuntimeError("this run fails too")

    with pytest.raises(RuntimeError):
        replace_dir_atomically(target, fail)
    assert (target / "report.html").read_text() == "good"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["2026-10"]


def test_the_previous_copy_can_be_removed_in_the_background(tmp_path: Path):
    target = tmp_path / "2026-10"
    replace_dir_atomically(target, write("first"))
    replace_dir_atomically(target, write("second"), remove_old_in_background=True)
    replace_dir_atomically(target, write("third"), remove_old_in_background=True)  # the first may not be gone yet
    assert (target / "report.html").read_text() == "third"
    for thread in threading.enumerate():
        if thread.name.startswith("remove "):
            thread.join()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["2026-10"]
