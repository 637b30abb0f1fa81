"""Where the sweep finds its own programs (mpsbench, mpsbench-probe) when no option names them.

In order: beside the mpsbench-sweep that runs, when it is an installed copy (the same bin directory;
bin/mpsbench-sweep sets INSTALLED_BIN_DIR), then build/ of the repository this package lies in (a
source-tree run: harness/mpsbench-sweep), then PATH.
"""
import os
import shutil

import mpsbench_core

# The bin directory of an installed mpsbench-sweep (set by that launcher); None in the source tree.
INSTALLED_BIN_DIR = None

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def default_program(name):
    """The first of the places above that holds `name`; where none does, the first place (so an error names
    the path that was expected)."""
    places = ([os.path.join(INSTALLED_BIN_DIR, name)] if INSTALLED_BIN_DIR else []) + \
        [os.path.join(REPO, "build", name)]
    for path in places:
        if os.path.isfile(path):
            return path
    return shutil.which(name) or places[0]


def package_path():
    """PYTHONPATH for the helpers the sweep starts as `python3 -m mpsbench_sweep.…` (keepers, guardians,
    farmers): the directories holding mpsbench_sweep and mpsbench_core (one directory when installed,
    harness/sweep and core in the source tree)."""
    dirs = [os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
            os.path.dirname(os.path.dirname(os.path.abspath(mpsbench_core.__file__)))]
    return os.pathsep.join(dict.fromkeys(dirs))
