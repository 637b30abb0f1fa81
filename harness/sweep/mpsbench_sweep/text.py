"""Text the sweep prints: one line each, never a raw control character (mpsbench_core.text.printable).

Names and messages reach the terminal from places the sweep does not control: an application's name
(--app-name, or its program's name), a path, a job's last stderr line, the fields of a results file.
Every line the sweep says goes through printable(), and so does every value a message quotes.
"""
import sys

from mpsbench_core.text import printable  # noqa: F401  (the sweep's modules import it from here)


def quoted(text):
    """'text' for a message that names a value, escaped."""
    return f"'{printable(text)}'"


def say(message):
    """One line on stderr, prefixed with the program's name."""
    print(f"mpsbench-sweep: {printable(message)}", file=sys.stderr, flush=True)
