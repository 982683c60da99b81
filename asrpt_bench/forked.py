"""Independent calls side by side in forked processes, their results and warnings merged in call order.

`ordered_map(function, items, workers)` gives what `[function(item) for item in items]` gives, warnings and
first error included, using up to `workers` processes: this one and W-1 children forked from it (which share
every import and every object built before, copy-on-write, so nothing is pickled on the way in) claim the
items one at a time, in item order, from a pipe of tickets, so a process that another program's load slows
down takes fewer; each child sends its outcomes back pickled, by item index. Each item runs under
`warnings.catch_warnings(record=True)`; once every share is done, the warnings of each item are issued
again here in item order, through the caller's filters (a run's `RunNotes` dedupes and records them as in a
serial loop), and the first item that raised, in item order, raises here: the same exception, with the
worker's traceback added as a note; the items after it are dropped, as a loop would never have run them.

Forking is used only where it is safe, else the items run here one after another (`fork_refusal` says
why): on Linux (fork is its multiprocessing default; elsewhere system libraries may not survive a fork),
with no other Python thread alive (a thread holding a lock at the fork would leave it held in the child
forever), and with more than one worker and item. tqdm's monitor thread, which its first bar starts (even a
disabled one, as on a pipe) and which outlives every bar, is stopped when no bar is open rather than counted
(tqdm starts it again with its next bar). A child that dies without sending its results (killed,
out of memory) fails the call with a RuntimeError naming its pid and exit status; Ctrl-C or SIGTERM here
kills and reaps every child.
"""

from __future__ import annotations

import os
import pickle
import signal
import struct
import sys
import threading
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence, TypeVar

T = TypeVar("T")
R = TypeVar("R")


@dataclass
class Outcome:
    """One item's call: its value or the exception it raised, and the warnings it issued, in order."""

    value: Any = None
    error: BaseException | None = None
    caught: list[tuple[Warning, type[Warning], str, int]] = field(default_factory=list)
    worker_traceback: str = ""


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity where the platform says it, else the CPU count)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def fork_refusal(workers: int, items: int) -> str | None:
    """Why `items` calls run here one after another rather than in `workers` processes (None: they fork)."""
    if workers <= 1 or items <= 1:
        return "one worker or one item"
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return f"fork is used on Linux only (platform {sys.platform})"
    _stop_idle_tqdm_monitor()
    if threading.active_count() > 1:
        return f"{threading.active_count() - 1} other thread(s) alive (forking could leave their locks held)"
    return None


def _stop_idle_tqdm_monitor() -> None:
    """Stop tqdm's monitor thread if no bar is open (module doc); it is joined, so it is gone on return."""
    tqdm_module = sys.modules.get("tqdm.std")
    if tqdm_module is None:
        return
    bar_class = tqdm_module.tqdm
    monitor = bar_class.monitor
    if monitor is not None and not bar_class._instances:
        monitor.exit()
        bar_class.monitor = None


def _call(function: Callable[[T], R], item: T) -> Outcome:
    """function(item) with its warnings recorded and its exception (but not an interrupt) kept."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            outcome = Outcome(value=function(item))
        except (Exception, SystemExit) as error:
            outcome = Outcome(error=error, worker_traceback=traceback.format_exc())
    outcome.caught = [(w.message, w.category, w.filename, w.lineno) for w in caught]  # type: ignore[misc]
    return outcome


def _round_trips(value: Any) -> bool:
    try:
        pickle.loads(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        return True
    except Exception:  # noqa: BLE001 -- whatever fails to travel is replaced, not lost
        return False


def _degraded(outcome: Outcome) -> Outcome:
    """An outcome that cannot travel, made one that can: an exception (or a value) that does not survive
    pickling becomes a RuntimeError with its type and message; a warning, a UserWarning with its text."""
    caught = [entry if _round_trips(entry) else (UserWarning(str(entry[0])), UserWarning, *entry[2:])
              for entry in outcome.caught]
    if outcome.error is not None and _round_trips(outcome.error):
        return Outcome(error=outcome.error, caught=caught, worker_traceback=outcome.worker_traceback)
    shown = outcome.error if outcome.error is not None else TypeError(
        f"a result of type {type(outcome.value).__name__} cannot be pickled")
    error = RuntimeError(f"{type(shown).__name__}: {shown} (in a forked worker; it could not be sent back as it is)")
    return Outcome(error=error, caught=caught, worker_traceback=outcome.worker_traceback)


def _sendable(outcomes: dict[int, Outcome]) -> bytes:
    """The pickled outcomes (by item index), each checked to unpickle (an exception whose constructor takes
    other arguments than its `args` pickles but does not unpickle); one that does not is `_degraded`."""
    try:
        payload = pickle.dumps(outcomes, protocol=pickle.HIGHEST_PROTOCOL)
        pickle.loads(payload)
        return payload
    except Exception:  # noqa: BLE001
        safe = {index: outcome if _round_trips(outcome) else _degraded(outcome) for index, outcome in outcomes.items()}
        return pickle.dumps(safe, protocol=pickle.HIGHEST_PROTOCOL)


TICKET = struct.Struct("<I")
MAX_TICKETS = 1024
"""Tickets the pipe holds at most: 4 KiB, one page, what an empty pipe always takes in one atomic write."""


def _claimed(tickets_fd: int, items: int) -> Iterator[int]:
    """The item indices this process claims from the shared ticket pipe, one ticket at a time (a read of
    a whole ticket is atomic, so no two processes get the same one); a ticket covers a run of consecutive
    items when there are more than MAX_TICKETS."""
    per_ticket = -(-items // MAX_TICKETS)
    while data := os.read(tickets_fd, TICKET.size):
        first = TICKET.unpack(data)[0] * per_ticket
        yield from range(first, min(first + per_ticket, items))


def _run_claimed(function: Callable[[T], R], items: Sequence[T], tickets_fd: int,
                 finished: Callable[[int], None] | None = None) -> dict[int, Outcome]:
    """Run the items this process claims until the tickets run out or one of them fails; then it takes every
    ticket left, which is of a later item, one a loop would not reach, so no process starts another one.
    `finished(1)` after each item."""
    done: dict[int, Outcome] = {}
    for index in _claimed(tickets_fd, len(items)):
        done[index] = _call(function, items[index])
        if finished is not None:
            finished(1)
        if done[index].error is not None:
            while os.read(tickets_fd, 4096):
                pass
            break
    return done


def _child(function: Callable[[T], R], items: Sequence[T], tickets_fd: int, write_fd: int) -> None:
    """Run the items this child claims and send their outcomes; never returns (os._exit: no atexit
    handler runs and no buffer of the parent's is flushed twice)."""
    code = 1
    try:
        payload = _sendable(_run_claimed(function, items, tickets_fd))
        with os.fdopen(write_fd, "wb") as pipe:
            pipe.write(payload)
        code = 0
    finally:
        os._exit(code)


@dataclass
class _Worker:
    pid: int
    read_fd: int
    reaped: bool = False

    def receive(self) -> dict[int, Outcome]:
        """The child's outcomes by item index, once it has sent them and exited; a RuntimeError if it
        died first."""
        with os.fdopen(self.read_fd, "rb") as pipe:
            payload = pipe.read()
        _, status = os.waitpid(self.pid, 0)
        self.reaped = True
        if status != 0 or not payload:
            raise RuntimeError(f"a forked worker (pid {self.pid}) died before sending its results "
                               f"({_exit_text(status)})")
        return pickle.loads(payload)

    def stop(self) -> None:
        if not self.reaped:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            self.reaped = True


def _exit_text(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit status {os.waitstatus_to_exitcode(status)}"


def _outcomes(function: Callable[[T], R], items: Sequence[T], workers: int,
              finished: Callable[[int], None] | None) -> list[Outcome]:
    """Every item's outcome up to the first failure, in item order: W-1 forked children and this process
    claim items one by one, in item order, from a pipe of tickets (so a process slowed by another
    program's load takes fewer); the outcomes come back by index."""
    tickets = min(len(items), MAX_TICKETS)
    tickets_fd, fill_fd = os.pipe()
    children: list[_Worker] = []
    try:
        os.write(fill_fd, b"".join(TICKET.pack(ticket) for ticket in range(tickets)))
        os.close(fill_fd)
        for _ in range(workers - 1):
            read_fd, write_fd = os.pipe()
            pid = os.fork()
            if pid == 0:  # the child: never returns
                os.close(read_fd)
                _child(function, items, tickets_fd, write_fd)
            os.close(write_fd)
            children.append(_Worker(pid, read_fd))
        done = _run_claimed(function, items, tickets_fd, finished)
        for child in children:
            received = child.receive()
            done.update(received)
            if finished is not None and received:
                finished(len(received))
    finally:
        os.close(tickets_fd)
        for child in children:
            child.stop()
    failed = min((index for index, outcome in done.items() if outcome.error is not None), default=len(items) - 1)
    return [done[index] for index in range(failed + 1)]


def ordered_map(function: Callable[[T], R], items: Sequence[T], workers: int,
                finished: Callable[[int], None] | None = None) -> Iterator[R]:
    """function(item) for each item, in item order, computed in up to `workers` processes (module doc);
    `finished(n)` says n more items are done (a progress bar's update: called in this process only, once the
    children are forked, so a bar it starts, whose monitor thread would refuse the fork, starts after it).
    Where forking is refused (`fork_refusal`) the iterator calls function(item) as it is advanced, exactly
    as a loop would; else every item is computed before this returns, and the iterator issues each item's
    warnings and raises the first error as it reaches them."""
    if fork_refusal(workers, len(items)) is not None:
        return _one_by_one(function, items, finished)
    return _merged(_outcomes(function, items, min(workers, len(items)), finished))


def _one_by_one(function: Callable[[T], R], items: Sequence[T], finished: Callable[[int], None] | None) -> Iterator[R]:
    for item in items:
        value = function(item)
        if finished is not None:
            finished(1)
        yield value


def _merged(outcomes: list[Outcome]) -> Iterator[Any]:
    registry: dict[Any, Any] = {}  # once-per-location warnings stay once across the merged items
    for outcome in outcomes:
        for message, category, filename, lineno in outcome.caught:
            warnings.warn_explicit(message, category, filename, lineno, registry=registry)
        if outcome.error is not None:
            if outcome.worker_traceback and outcome.error.__traceback__ is None and hasattr(outcome.error, "add_note"):
                outcome.error.add_note(f"in a forked worker:\n{outcome.worker_traceback.rstrip()}")
            raise outcome.error
        yield outcome.value
