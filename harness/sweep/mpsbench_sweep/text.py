"""Text the sweep prints: one line each, prefixed with its name."""
import sys


def quoted(text):
    """'text' for a message that names a value."""
    return f"'{text}'"


def say(message):
    """One line on stderr, prefixed with the program's name."""
    print(f"mpsbench-sweep: {message}", file=sys.stderr, flush=True)
