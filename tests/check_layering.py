#!/usr/bin/env python3
"""No include runs upward (harness/README.md, "The rule").

Every #include "..." of harness/ and kernels/ is resolved and held against the
layers: a file of harness/FOLDER may include its own folder, a folder of a lower
layer, or a kernel header; the folders of one layer do not include each other;
kernels/ includes only kernels/. The programs at harness/'s top may include
anything. An include that names no file of the tree is an error too, so the
check cannot be passed by a path it does not understand.

usage: check_layering.py REPOSITORY_ROOT   (exit 1 with one line per violation)
"""
import re
import sys
from pathlib import Path

LAYERS = {"runtime": 1, "sharing": 2, "measure": 3, "cli": 4, "results": 4}
KERNELS = 0
SOURCES = (".hpp", ".cpp", ".cu", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def target_layer(root: Path, include: str):
    """(folder, layer) the include names, or None when no file of the tree has that path."""
    if "/" not in include:
        return ("kernels", KERNELS) if (root / "kernels" / include).is_file() else None
    folder = include.split("/", 1)[0]
    if folder in LAYERS and (root / "harness" / include).is_file():
        return folder, LAYERS[folder]
    return None


def violations(root: Path):
    for path in sorted((root / "kernels").rglob("*")):
        if path.suffix in SOURCES:
            for include in INCLUDE.findall(path.read_text(encoding="utf-8")):
                if not (path.parent / include).is_file():
                    yield f"{path.relative_to(root)}: includes \"{include}\", not a file of kernels/"
    for folder, layer in LAYERS.items():
        for path in sorted((root / "harness" / folder).rglob("*")):
            if path.suffix not in SOURCES:
                continue
            for include in INCLUDE.findall(path.read_text(encoding="utf-8")):
                found = target_layer(root, include)
                where = f"{path.relative_to(root)}: includes \"{include}\""
                if found is None:
                    yield f"{where}, which names no header of harness/<layer>/ or kernels/"
                elif found[0] != folder and found[1] >= layer:
                    yield f"{where}: {found[0]}/ (layer {found[1]}) is not below {folder}/ (layer {layer})"
    for path in sorted((root / "harness").iterdir()):
        if path.is_dir() and path.name not in LAYERS and path.name != "sweep":
            yield f"{path.relative_to(root)}: a folder the layering does not know (add it to LAYERS and the README)"


def main() -> int:
    root = Path(sys.argv[1]).resolve()
    found = list(violations(root))
    for line in found:
        print(line)
    if not found:
        print(f"layering kept: {', '.join(f'{f} ({n})' for f, n in LAYERS.items())} over kernels/ (0)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
