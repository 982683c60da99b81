"""forked.ordered_map: a loop's results, warnings and first error, computed in forked processes."""

from __future__ import annotations

import os
import pickle
import threading
import time
import warnings
from pathlib import Path

import pytest

from asrpt_bench.adjustments import Adjustment, AdjustmentWarning
from asrpt_bench.errors import ConfigError
from asrpt_bench.forked import MAX_TICKETS, fork_refusal, ordered_map


@pytest.fixture(autouse=True)
def forking_is_allowed() -> None:
    """Each test here exercises the forked path: it must not silently run the serial one."""
    assert fork_refusal(2, 2) is None


def test_a_closed_progress_bar_does_not_refuse_the_fork() -> None:
    """tqdm starts a monitor thread with its first bar, even a disabled one, and keeps it after the bar
    closes: with no bar open it is stopped, and the items still run in several processes."""
    from tqdm import tqdm

    with tqdm(total=1, disable=True):
        pass
    with open(os.devnull, "w") as devnull, tqdm(total=1, file=devnull) as bar:
        bar.update()
    assert tqdm.monitor is not None and tqdm.monitor.is_alive()
    assert fork_refusal(2, 8) is None
    assert tqdm.monitor is None and threading.active_count() == 1
    with open(os.devnull, "w") as devnull, tqdm(total=1, file=devnull):  # an open bar keeps its monitor
        assert fork_refusal(2, 8) == "1 other thread(s) alive (forking could leave their locks held)"
    assert fork_refusal(2, 8) is None


def pid_of(item: int) -> tuple[int, int]:
    return item * item, os.getpid()


def wait_for(path: Path) -> None:
    deadline = time.monotonic() + 60
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.005)
    assert path.exists(), f"{path} never appeared"


def test_results_come_in_item_order_from_several_processes(tmp_path: Path) -> None:
    """Each item waits until two processes have run items, so a child surely takes part."""

    def square(item: int, marks: Path) -> tuple[int, int]:
        (marks / str(os.getpid())).touch()
        deadline = time.monotonic() + 60
        while len(list(marks.iterdir())) < 2 and time.monotonic() < deadline:
            time.sleep(0.002)
        return item * item, os.getpid()

    for workers in (2, 3):
        marks = tmp_path / str(workers)
        marks.mkdir()
        results = list(ordered_map(lambda item: square(item, marks), list(range(7)), workers))
        assert [value for value, _ in results] == [i * i for i in range(7)]
        assert len({pid for _, pid in results}) >= 2
    many = list(ordered_map(pid_of, list(range(3 * MAX_TICKETS + 5)), 2))  # a ticket covers 4 items here
    assert [value for value, _ in many] == [i * i for i in range(3 * MAX_TICKETS + 5)]


def test_one_worker_or_one_item_runs_here_lazily() -> None:
    calls: list[int] = []

    def note(item: int) -> int:
        calls.append(item)
        return item

    results = ordered_map(note, [1, 2, 3], 1)
    assert calls == []  # nothing runs before the caller advances the iterator, as in a loop
    assert next(results) == 1 and calls == [1]
    assert list(ordered_map(pid_of, [5], 4)) == [(25, os.getpid())]
    assert fork_refusal(1, 8) == fork_refusal(4, 1) == "one worker or one item"


def test_an_alive_thread_refuses_the_fork() -> None:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert fork_refusal(2, 4) == "1 other thread(s) alive (forking could leave their locks held)"
        assert {pid for _, pid in ordered_map(pid_of, [1, 2, 3, 4], 2)} == {os.getpid()}
    finally:
        stop.set()
        thread.join()


def warn_twice(item: int) -> int:
    warnings.warn(f"item {item}", UserWarning)
    warnings.warn(AdjustmentWarning(Adjustment("dropped_jobs", item, f"dropped {item}")))
    return item


def test_warnings_are_issued_again_here_in_item_order() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert list(ordered_map(warn_twice, [0, 1, 2, 3, 4], 2)) == [0, 1, 2, 3, 4]
    assert [str(w.message) for w in caught] == [text for i in range(5) for text in (f"item {i}", f"dropped {i}")]
    adjustments = [w.message.adjustment for w in caught if isinstance(w.message, AdjustmentWarning)]
    assert adjustments == [Adjustment("dropped_jobs", i, f"dropped {i}") for i in range(5)]


def test_an_adjustment_warning_survives_pickling() -> None:
    warning = AdjustmentWarning(Adjustment("clamped", 3, "clamped 3 values"))
    again = pickle.loads(pickle.dumps(warning))
    assert type(again) is AdjustmentWarning and again.adjustment == warning.adjustment and str(again) == str(warning)


def fail_at(item: int) -> int:
    warnings.warn(f"before {item}", UserWarning)
    if item == 2:
        time.sleep(0.2)  # item 3 fails while 2 still runs: its error must wait for 2's outcome
    if item == 3:
        raise ConfigError(f"workload.x must be positive, got {item}")
    if item == 4:
        raise ValueError("a later failure, which a loop never reaches")
    if item == 5:
        raise SystemExit(7)
    return item


def test_the_first_error_in_item_order_is_raised_with_the_workers_traceback() -> None:
    """Item 3 fails first in item order; item 4 fails too, but a loop would never have run it: neither its
    error nor its warning surfaces, whichever process ran it."""
    got: list[int] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ConfigError) as raised:
            for value in ordered_map(fail_at, list(range(6)), 2):
                got.append(value)
    assert str(raised.value) == "workload.x must be positive, got 3" and got == [0, 1, 2]
    assert [str(w.message) for w in caught] == ["before 0", "before 1", "before 2", "before 3"]
    note = "\n".join(getattr(raised.value, "__notes__", []))
    assert note == "" or (note.startswith("in a forked worker:\nTraceback") and "in fail_at" in note)


def test_an_error_keeps_its_traceback_here_or_gets_the_childs_and_sys_exit_stays_sys_exit(tmp_path: Path) -> None:
    """Each process fails on the first item it claims (this one once a child has started): item 0's error is
    raised, with its own traceback if this process ran it, else with the child's as a note."""
    parent = os.getpid()

    def fail(item: int) -> int:
        if os.getpid() == parent:
            wait_for(tmp_path / "child")
            raise ValueError(f"failed here at {item}")
        (tmp_path / "child").touch()
        raise ValueError(f"failed in a child at {item}")

    with pytest.raises(ValueError) as raised:
        list(ordered_map(fail, [0, 1], 2))
    notes = getattr(raised.value, "__notes__", [])
    if str(raised.value) == "failed here at 0":
        assert not notes and raised.traceback[-1].name == "fail"
    else:
        assert str(raised.value) == "failed in a child at 0" and notes[0].startswith("in a forked worker:\nTraceback")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(SystemExit) as exited:
            list(ordered_map(fail_at, [0, 5], 2))
    assert exited.value.code == 7


def test_a_child_that_dies_fails_the_call_naming_its_pid(tmp_path: Path) -> None:
    parent = os.getpid()

    def die_in_a_child(item: int) -> int:
        if os.getpid() != parent:
            (tmp_path / "child").touch()
            os._exit(3)
        wait_for(tmp_path / "child")
        return item

    with pytest.raises(RuntimeError, match=r"^a forked worker \(pid \d+\) died before sending its results "
                                           r"\(exit status 3\)$"):
        list(ordered_map(die_in_a_child, [0, 1, 2, 3], 2))


class Unpicklable:
    def __reduce__(self) -> tuple:
        raise TypeError("no pickling here")


def test_a_result_that_cannot_travel_fails_the_call_in_one_line(tmp_path: Path) -> None:
    parent = os.getpid()

    def unpicklable_in_a_child(item: int) -> object:
        if os.getpid() != parent:
            (tmp_path / "child").touch()
            return Unpicklable()
        wait_for(tmp_path / "child")
        return item

    with pytest.raises(RuntimeError) as raised:
        list(ordered_map(unpicklable_in_a_child, [0, 1], 2))
    assert str(raised.value) == ("TypeError: a result of type Unpicklable cannot be pickled (in a forked worker; it "
                                 "could not be sent back as it is)")


def test_no_child_is_left_behind() -> None:
    list(ordered_map(pid_of, list(range(6)), 3))
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)


def test_finished_counts_every_item_once_in_this_process() -> None:
    """The progress callback runs here only (after the fork: no bar thread beside it), n items at a time."""
    for workers in (1, 2, 3):
        counts: list[int] = []
        threads: list[int] = []

        def finished(count: int) -> None:
            counts.append(count)
            threads.append(threading.active_count())

        assert [value for value, _ in ordered_map(pid_of, list(range(9)), workers, finished)] == [
            i * i for i in range(9)]
        assert sum(counts) == 9 and all(count >= 1 for count in counts) and set(threads) == {1}


def test_after_a_failure_no_process_starts_another_item(tmp_path: Path) -> None:
    """Item 0 fails at once: the process running item 1 finishes it (half a second), and nobody starts items
    2..7, as a loop stops at the failure (each item leaves a mark when it starts)."""

    def fail_first(item: int) -> int:
        (tmp_path / str(item)).touch()
        if item == 0:
            raise ValueError("the first fails")
        time.sleep(0.5)
        return item

    with pytest.raises(ValueError, match="^the first fails"):
        list(ordered_map(fail_first, list(range(8)), 2))
    assert {int(mark.name) for mark in tmp_path.iterdir()} <= {0, 1}
