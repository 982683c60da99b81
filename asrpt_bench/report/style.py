"""The one figure style every plot shares: labels, colours, markers, size, and PNG+PDF output."""

from __future__ import annotations

import io
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from ..io import atomic_write_bytes  # noqa: E402

SCHEDULER_LABELS = {
    "asrpt": "A-SRPT",
    "asrpt_oracle": "A-SRPT (oracle)",
    "spjf": "SPJF",
    "spwf": "SPWF",
    "wcs_duration": "WCS-Duration",
    "wcs_workload": "WCS-Workload",
    "wcs_subtime": "WCS-SubTime",
    "fifo": "FIFO",
    "srtf": "SRTF",
    "srtf_oracle": "SRTF (oracle)",
    "las2d": "2D-LAS",
}
PLACER_LABELS = {"heavy_edge": "Heavy-Edge", "ilp": "ILP (optimal)", "first_fit": "First-fit", "random": "Random"}
_PALETTE = plt.get_cmap("tab10").colors
_MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*")
RC = {
    "figure.figsize": (6.0, 3.8),
    "figure.dpi": 120,
    "savefig.dpi": 200,
    "savefig.bbox": "tight",
    "font.size": 10,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.frameon": False,
    "legend.fontsize": 8,
    "lines.linewidth": 1.6,
    "lines.markersize": 5,
    "pdf.fonttype": 42,
    "figure.constrained_layout.use": True,
}


def label(name: str) -> str:
    """Display name of a scheduler or placer (the raw name when unknown)."""
    return SCHEDULER_LABELS.get(name, PLACER_LABELS.get(name, name))


def series_style(name: str) -> dict[str, object]:
    """Stable colour and marker per series name, the same in every figure."""
    order = list(SCHEDULER_LABELS) + list(PLACER_LABELS)
    index = order.index(name) if name in order else zlib.crc32(name.encode()) % len(_PALETTE)
    return {"color": _PALETTE[index % len(_PALETTE)], "marker": _MARKERS[index % len(_MARKERS)]}


@contextmanager
def figure_style() -> Iterator[None]:
    with plt.rc_context(RC):
        yield


MAX_FILE_BYTES = 300_000
"""A PDF larger than this is not kept (a PDF of many points); a PNG larger than this is drawn again at the
next lower resolution of PNG_DPIS until it fits (a figure of many shaded panels)."""
PNG_DPIS = (None, 100, 80)
"""None: the figure's own resolution (figure.dpi of figure_style)."""
METADATA = {".png": {"Software": None}, ".pdf": {"CreationDate": None, "Producer": None, "Creator": None}}
"""No timestamps or library versions in the files, so the same table gives the same bytes."""


def save_figure(figure: Figure, out_dir: Path, name: str) -> list[Path]:
    """Write `name`.png (at the first resolution of PNG_DPIS that fits MAX_FILE_BYTES), and `name`.pdf when it
    is at most MAX_FILE_BYTES, into `out_dir`; close the figure."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for suffix in (".png", ".pdf"):
        path = out_dir / f"{name}{suffix}"
        for dpi in PNG_DPIS if suffix == ".png" else (None,):
            buffer = io.BytesIO()
            figure.savefig(buffer, format=suffix[1:], bbox_inches="tight", metadata=METADATA[suffix],
                           **({"dpi": dpi} if dpi else {}))
            data = buffer.getvalue()
            if len(data) <= MAX_FILE_BYTES:
                break
        if suffix == ".pdf" and len(data) > MAX_FILE_BYTES:
            path.unlink(missing_ok=True)
            continue
        atomic_write_bytes(path, data)
        paths.append(path)
    plt.close(figure)
    return paths
