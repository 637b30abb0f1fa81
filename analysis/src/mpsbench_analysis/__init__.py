"""Analysis of mpsbench results files.

The importable API is small on purpose: load files into DataFrames with
:func:`load_results`, then hand the :class:`ResultSet` to the summary,
crossover, compare, plot, report or export functions, which are what the
``mpsbench-analyze`` command line calls too.
"""

from .errors import AnalysisError
from .loader import ResultSet, load_document, load_results

__all__ = ["AnalysisError", "ResultSet", "load_document", "load_results"]
__version__ = "0.1.0"
