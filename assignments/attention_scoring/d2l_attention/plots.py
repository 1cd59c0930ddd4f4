# Generated from reference/plots.py by `autograder release`; do not edit.
"""Attention heatmaps (D2L 11.1's show_heatmaps), rendered without a display.

matplotlib is imported on the first heatmap drawn, not with this module: importing it takes
half a second that grading (which never draws) would pay in every sandbox.
"""
import functools
import io
from pathlib import Path


@functools.cache
def _heatmap_figure():
    """The Figure class ``show_heatmaps`` returns: one that Jupyter shows as a picture
    without pyplot, so no backend is chosen (or changed) and no display is needed."""
    from matplotlib.figure import Figure

    class HeatmapFigure(Figure):
        def _repr_png_(self) -> bytes:
            buffer = io.BytesIO()
            self.savefig(buffer, format="png", dpi=100)
            return buffer.getvalue()
    return HeatmapFigure


def show_heatmaps(matrices, xlabel: str, ylabel: str, titles=None,
                  figsize=(2.5, 2.5), cmap: str = "Reds", path: str | Path | None = None):
    """Draw a grid of heatmaps from ``matrices`` (rows, cols, Q, K); save a PNG if ``path``.

    Returns the matplotlib Figure (Jupyter displays it as the cell's output).
    """
    matrices = matrices.detach().cpu()
    num_rows, num_cols = matrices.shape[0], matrices.shape[1]
    fig = _heatmap_figure()(figsize=(figsize[0] * num_cols, figsize[1] * num_rows))
    axes = fig.subplots(num_rows, num_cols, sharex=True, sharey=True, squeeze=False)
    for i, (row_axes, row_matrices) in enumerate(zip(axes, matrices)):
        for j, (ax, matrix) in enumerate(zip(row_axes, row_matrices)):
            pcm = ax.imshow(matrix.numpy(), cmap=cmap)
            if i == num_rows - 1:
                ax.set_xlabel(xlabel)
            if j == 0:
                ax.set_ylabel(ylabel)
            if titles:
                ax.set_title(titles[j])
    fig.colorbar(pcm, ax=axes, shrink=0.6)
    if path is not None:
        fig.savefig(path, dpi=100)
    return fig
