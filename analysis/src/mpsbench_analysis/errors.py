"""The one exception type the command line turns into an exit-2 message.

Every problem with the user's input (a file, a field in it, a mismatch
between files) is raised as AnalysisError so that the CLI boundary can print
``mpsbench-analyze: error: FILE: field X: ...`` instead of a traceback.
"""

from __future__ import annotations


class AnalysisError(Exception):
    """Bad input, named by file and (where one is to blame) field."""

    def __init__(self, message: str, file: str | None = None, field: str | None = None) -> None:
        self.file = file
        self.field = field
        self.detail = message
        super().__init__(self._render())

    def _render(self) -> str:
        parts = []
        if self.file is not None:
            parts.append(str(self.file))
        if self.field:
            parts.append(f"field {self.field}")
        parts.append(self.detail)
        return ": ".join(parts)
