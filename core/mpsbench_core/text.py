"""Text for a terminal: names and messages from files and users, with no raw control character.

Names reach the terminal from places nobody checked: an application's name, a tenant's spec, a kernel
name in a results file, a job's last stderr line. A newline would forge a line of the program's own;
an ESC starts a terminal control sequence (colours, cursor moves, window titles). printable() escapes
every character Python does not call printable (controls, format characters such as the bidirectional
overrides, line and paragraph separators, lone surrogates from undecodable bytes) as \\n, \\x1b, \\u202e,
so the text stays readable and shows exactly what was there. The sweep and the analysis both print
through it, so they print the same lines for the same file.
"""

from __future__ import annotations

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(text: object) -> str:
    """str(text) with every non-printable character but the space escaped; unchanged when all are printable."""
    text = str(text)
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch.isprintable() or ch == " ":
            out.append(ch)
        elif ch in _NAMED:
            out.append(_NAMED[ch])
        elif ord(ch) < 0x100:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return "".join(out)
