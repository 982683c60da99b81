"""The placement memo on its own: what it remembers, what it forgets first, and that a remembered
"does not fit" is told apart from a state never met."""

from __future__ import annotations

from asrpt_bench.core import Placement
from asrpt_bench.sim import placement_memo
from asrpt_bench.sim.placement_memo import MISSING, PlacementMemo


def test_a_state_never_met_is_missing_and_a_remembered_none_is_none():
    memo = PlacementMemo(4)
    assert memo.get((1, (8, 8))) is MISSING
    memo.put((1, (8, 8)), None)
    memo.put((1, (4, 8)), (Placement((1, 1)), 0.5))
    assert memo.get((1, (8, 8))) is None
    assert memo.get((1, (4, 8))) == (Placement((1, 1)), 0.5)
    assert memo.get((2, (4, 8))) is MISSING  # another plan on the same free GPUs
    assert len(memo) == 2


def test_the_oldest_state_met_is_forgotten_first_whatever_was_read_since():
    memo = PlacementMemo(3)
    for k in range(3):
        memo.put((k, ()), None)
    assert memo.get((0, ())) is None  # a read does not make a state younger
    memo.put((3, ()), None)
    assert [memo.get((k, ())) for k in range(4)] == [MISSING, None, None, None]
    memo.put((4, ()), None)
    assert memo.get((1, ())) is MISSING and len(memo) == 3


def test_the_size_is_read_when_a_memo_is_made(monkeypatch):
    monkeypatch.setattr(placement_memo, "PLACEMENT_MEMO", 2)
    memo = PlacementMemo()
    for k in range(5):
        memo.put((k, ()), None)
    assert len(memo) == 2 and memo.get((3, ())) is None and memo.get((2, ())) is MISSING
    assert PlacementMemo(0).size == 0
