"""The pages' pictures as PNG bytes: attention heatmaps and the class's score distribution.

matplotlib's object API only (``Figure``, never ``pyplot``): no global state, no display,
safe in any process. The heatmaps use the book's colour map (d2l's ``show_heatmaps``:
``cmap='Reds'``), the student's weights and the reference's on one colour scale, so the
same colour means the same weight in both panels.
"""
import functools
import io
import math

import numpy as np
from matplotlib import colormaps
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator  # the histogram's counts

from ..results import Heatmap

CMAP = colormaps["Reds"].with_extremes(bad="#9e9e9e")  # NaN / inf weights show grey
ANNOTATE_MAX_CELLS = 48   # small enough to print every weight in its cell and still read it
ANNOTATE_MAX_KEYS = 8


def _matrix(rows: tuple) -> np.ndarray:
    """A (queries, keys) float array with non-finite entries as NaN (drawn grey)."""
    matrix = np.asarray(rows, dtype=float)  # (Q, K)
    matrix[~np.isfinite(matrix)] = np.nan
    return matrix


def _png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    return buffer.getvalue()


def attention_heatmaps(heatmap: Heatmap, titles: tuple[str, str], axis_labels: tuple[str, str],
                       colour_label: str) -> tuple[bytes, bytes] | None:
    """The student's and the reference's weights as two PNGs on one colour scale (two images,
    so a phone can stack them and a desktop put them side by side); None when there is nothing
    honest to draw (``Heatmap.scale``: not matrices, or weights no colour scale can hold, such
    as -1.8e308 beside 1.8e308). NaN and infinite weights are drawn grey. ``axis_labels``: (x, y)."""
    scale = heatmap.scale()
    if scale is None:
        return None

    def frozen(rows: list[list[float]]) -> tuple:
        return tuple(tuple(row) for row in rows)
    return _drawn(frozen(heatmap.got), frozen(heatmap.expected), scale, titles, axis_labels, colour_label)


# Every student meets the same examples (SPEC §3), so students who make the same mistake get
# the same weights: a batch draws each distinct pair once (about 0.25 s of CPU per pair).
@functools.lru_cache(maxsize=128)
def _drawn(got: tuple, expected: tuple, scale: tuple[float, float], titles: tuple[str, str],
           axis_labels: tuple[str, str], colour_label: str) -> tuple[bytes, bytes]:
    matrices = [_matrix(got), _matrix(expected)]
    rows = max(m.shape[0] for m in matrices)
    pictures = tuple(_heatmap(matrix, title, axis_labels, colour_label, scale, rows)
                     for matrix, title in zip(matrices, titles, strict=True))
    return pictures[0], pictures[1]


def _heatmap(matrix: np.ndarray, title: str, axis_labels: tuple[str, str], colour_label: str,
             scale: tuple[float, float], rows: int) -> bytes:
    # Axes placed by hand: a layout engine (constrained, tight) would double the drawing time,
    # and a batch draws two of these per failed check.
    height = min(5.5, 1.6 + 0.45 * rows)
    figure = Figure(figsize=(4.6, height))
    bottom, top = 0.62 / height, 1 - 0.34 / height
    ax = figure.add_axes((0.14, bottom, 0.64, top - bottom))
    bar = figure.add_axes((0.81, bottom, 0.03, top - bottom))
    shown = ax.imshow(matrix, cmap=CMAP, vmin=scale[0], vmax=scale[1], aspect="auto",
                      interpolation="nearest")
    ax.set_title(title, fontsize=11)
    ax.set_xlabel(axis_labels[0])
    ax.set_ylabel(axis_labels[1])
    ax.set_xticks(_ticks(matrix.shape[1]))
    ax.set_yticks(_ticks(matrix.shape[0]))
    if matrix.size <= ANNOTATE_MAX_CELLS and matrix.shape[1] <= ANNOTATE_MAX_KEYS:
        _annotate(ax, matrix, sum(scale) / 2)
    figure.colorbar(shown, cax=bar, label=colour_label)
    return _png(figure)


def _ticks(count: int) -> list[int]:
    """Every position up to 12, else about 8 evenly spaced (positions are whole numbers)."""
    return list(range(count)) if count <= 12 else sorted({round(x) for x in np.linspace(0, count - 1, 8)})


def _annotate(ax, matrix: np.ndarray, middle: float) -> None:
    """Print each weight in its cell (white on dark cells), so small cases can be read exactly."""
    for (query, key), weight in np.ndenumerate(matrix):
        label = "nan" if math.isnan(weight) else f"{weight:.2f}" if abs(weight) < 1000 else f"{weight:.1e}"
        colour = "white" if not math.isnan(weight) and weight > middle else "black"
        ax.text(key, query, label, ha="center", va="center", fontsize=8, color=colour)


def score_histogram(scores: list[float], maximum: float, width: float, labels: tuple[str, str],
                    mean_label: str) -> bytes:
    """How many students got each autograded score (bins of ``width`` points from 0), with
    the mean as a dashed line; ``mean_label`` is its legend (the caller writes the number)."""
    return _png(histogram_figure(scores, maximum, width, labels, mean_label))


def histogram_figure(scores: list[float], maximum: float, width: float, labels: tuple[str, str],
                     mean_label: str) -> Figure:
    """The histogram as a Figure. The legend sits above the plot, outside it: inside, it would
    cover a bar (the first, in a class where many scored 0)."""
    bins = max(1, math.ceil(maximum / width))
    edges = np.arange(bins + 1) * width  # the last bin holds full marks
    counts, _ = np.histogram(np.clip(scores, 0.0, edges[-1]), bins=edges)
    figure = Figure(figsize=(5.6, 3.2), layout="constrained")
    ax = figure.subplots()
    ax.bar(edges[:-1], counts, width=np.diff(edges), align="edge", color="#2f6db5",
           edgecolor="white")
    if scores:
        mean = float(np.mean(scores))
        ax.axvline(mean, color="#c0392b", linestyle="--", label=mean_label)
        ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), frameon=False, borderaxespad=0.2)
    ax.set_xlim(0.0, edges[-1])
    ax.set_xlabel(labels[0])
    ax.set_ylabel(labels[1])
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.spines[["top", "right"]].set_visible(False)
    return figure
