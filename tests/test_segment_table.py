"""SegmentTable: a preemptive run's segments as columns read back exactly as they were written."""

from __future__ import annotations

import dataclasses
import math
import pickle

import numpy as np
import pandas as pd
import pytest

from asrpt_bench.sim.records import (CHUNK_ROWS, SEGMENT_COLUMNS, Segment, SegmentTable, new_segment, record_column,
                                     segments_frame)


def segments(n: int, rng: np.random.Generator) -> list[Segment]:
    made = []
    for k in range(n):
        start = float(rng.uniform(0, 1e7))
        length = float(rng.choice([0.0, rng.uniform(0.1, 1e5)]))
        restart = min(float(rng.choice([0.0, 30.0])), length)
        gpus = int(rng.choice([1, 2, 8]))
        server = int(rng.integers(4))
        made.append(new_segment(job_id=f"j{k % 97}", start=start, end=start + length, restart_s=restart,
                                alpha=float(rng.uniform(0.01, 3.0)), placement=(server,) * gpus,
                                gpu_ids=tuple(range(8 * server, 8 * server + gpus))))
    return made


def table_of(made: list[Segment]) -> SegmentTable:
    table = SegmentTable()
    for s in made:
        table.append(s.job_id, s.start, s.end, s.restart_s, s.alpha, s.placement, s.gpu_ids)
    return table


def test_segments_read_back_as_written_across_chunks():
    made = segments(2 * CHUNK_ROWS + 17, np.random.default_rng(0))
    table = table_of(made)
    assert len(table) == len(made)
    assert list(table) == made and table == made and table == tuple(made)
    assert table[5] == made[5] and table[-1] == made[-1] and table[3:6] == tuple(made[3:6])
    for name in ("start", "end", "restart_s", "alpha", "job_id", "placement", "gpu_ids"):
        assert list(record_column(table, name)) == [getattr(s, name) for s in made]
    assert record_column(table, "iterations").tolist() == [s.iterations for s in made]
    assert record_column(table, "gpus").tolist() == [len(s.gpu_ids) for s in made]
    with pytest.raises(IndexError):
        table[len(made)]


def test_a_list_is_held_once_and_the_table_pickles():
    made = segments(500, np.random.default_rng(1))
    table = table_of(made)
    placements = record_column(table, "placement")
    assert len({id(p) for p in placements}) == len(set(placements))  # equal lists are one object
    again = pickle.loads(pickle.dumps(table))
    assert again == table and again[7] == made[7]
    table.append("late", 1.0, 2.0, 0.0, 1.0, (0,), (0,))  # appending after a read still reads back
    assert table[-1] == new_segment(job_id="late", start=1.0, end=2.0, restart_s=0.0, alpha=1.0, placement=(0,),
                                    gpu_ids=(0,))


def test_numbers_of_another_type_read_back_exactly():
    """An int start of a hand-made instance (and one too large for a float) keeps its type and value."""
    table = SegmentTable()
    table.append("a", 0, 2 ** 60 + 1, 0.0, 1.0, (0,), (0,))
    table.append("b", 2.5, 3.5, 0.0, 0.5, (0,), (1,))
    first = table[0]  # the first read, while the rows still wait to be moved into the array
    assert type(first.start) is int and first.start == 0 and first.end == 2 ** 60 + 1
    assert record_column(table, "end") == [2 ** 60 + 1, 3.5]
    assert isinstance(record_column(table, "alpha"), np.ndarray)


def test_a_number_of_another_type_past_the_first_chunk_reads_back_at_its_own_row():
    """A row kept as given is kept under its index in the whole table, not in its chunk: an int start two
    chunks in reads back there, and the row at its place within the chunk keeps its float."""
    made = segments(2 * CHUNK_ROWS + 5, np.random.default_rng(3))
    late = 2 * CHUNK_ROWS + 3
    made[late] = new_segment(job_id="late", start=7, end=9, restart_s=0.0, alpha=1.0, placement=(0,), gpu_ids=(0,))
    table = table_of(made)
    assert type(table[late].start) is int and table[late] == made[late]
    assert type(table[3].start) is float and table[3] == made[3]
    starts = record_column(table, "start")
    assert starts == [s.start for s in made] and type(starts[late]) is int and type(starts[3]) is float


def test_tables_of_as_many_segments_differ_where_one_segment_does():
    """Equality compares every segment, not only the counts (the tests compare runs' segments with it)."""
    made = segments(50, np.random.default_rng(4))
    changed = list(made)
    changed[30] = dataclasses.replace(made[30], end=made[30].end + 1.0)
    assert table_of(made) == table_of(list(made)) and table_of(made) == made
    assert table_of(made) != table_of(changed) and table_of(made) != changed
    assert table_of(made) != made[:49]


def test_the_frame_of_a_table_is_the_frame_of_its_segments():
    made = segments(300, np.random.default_rng(2))
    from_table = segments_frame(table_of(made))
    rows = [(s.job_id, s.start, s.end, s.restart_s, s.iterations, s.alpha, len(s.gpu_ids),
             " ".join(map(str, s.placement)), " ".join(map(str, s.gpu_ids))) for s in made]
    expected = pd.DataFrame(rows, columns=list(SEGMENT_COLUMNS))
    pd.testing.assert_frame_equal(from_table, expected)
    pd.testing.assert_frame_equal(segments_frame(made), expected)
    assert segments_frame(SegmentTable()).empty and list(segments_frame([]).columns) == list(SEGMENT_COLUMNS)
    assert math.isclose(from_table["iterations"].sum(), sum(s.iterations for s in made))
