"""Analysis of mpsbench results files.

The importable API is small on purpose: load files into DataFrames with
:func:`load_results`, then hand the :class:`ResultSet` to the summary,
crossover, compare, plot, report or export functions, which are what the
``mpsbench-analyze`` command line calls too.
"""

from .errors import AnalysisError
from .loader import ResultSet, load_document, load_results

__all__ = ["AnalysisError", "ResultSet", "load_document", "load_results"]


def _version():
    """The project's version: VERSION of the source tree this runs from (analysis/VERSION, a link to the
    repository's), else the installed distribution's (pip took it from that file)."""
    import os
    from importlib import metadata

    src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if os.path.basename(src) == "src":  # analysis/src/mpsbench_analysis: the source tree
        try:
            with open(os.path.join(os.path.dirname(src), "VERSION"), encoding="utf-8") as f:
                return f.read().strip()
        except OSError:
            pass
    try:
        return metadata.version("mpsbench-analysis")
    except metadata.PackageNotFoundError:
        return "unknown"


__version__ = _version()
