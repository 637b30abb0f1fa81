"""Opening recorded files, gzip-compressed or not (standard library only).

results/ and docs/workshop/ store recorded results and long logs compressed
(`gzip -9 -n`: FILE.json.gz, FILE.log.gz); what mpsbench writes is plain. The
scripts here read either, told apart by gzip's magic bytes rather than by the
name, as mpsbench-analyze does (analysis/src/mpsbench_analysis/validate.py).
"""
import gzip
import json

GZIP_MAGIC = b"\x1f\x8b"


def open_text(path, errors="strict"):
    """PATH opened for reading text (UTF-8), decompressed on the fly when it is gzip data."""
    with open(path, "rb") as f:
        compressed = f.read(2) == GZIP_MAGIC
    if compressed:
        return gzip.open(path, "rt", encoding="utf-8", errors=errors)
    return open(path, encoding="utf-8", errors=errors)


def load_json(path):
    """The JSON document in PATH (plain or gzip-compressed)."""
    with open_text(path) as f:
        return json.load(f)
