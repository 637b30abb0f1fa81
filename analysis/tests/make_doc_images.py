"""Regenerates docs/images/: the report and one figure of each kind, as a reader sees them.

    build/analysis-venv/bin/python analysis/tests/make_doc_images.py   # from the repository root

Everything comes from the recorded H100 sweep (results/h100-2026-11-21/sweep.json.gz, the full merged
file the tests' fixture is cut from), except the farmed
application's figure, which comes from the synthetic 2-GPU application sweep
of figure_docs.py (there is no real application fixture yet); its file name
says so.  The report screenshot is Chromium's (as in test_report_browser.py),
reduced to a 256-colour palette so that each file stays well under 300 KB.
Each figure is checked with layout_check before it is written.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import matplotlib.pyplot as plt  # noqa: E402
from PIL import Image  # noqa: E402  (a dependency of matplotlib)

import figure_docs  # noqa: E402
import layout_check  # noqa: E402
import test_report_browser as browser  # noqa: E402
from mpsbench_analysis import load_results  # noqa: E402
from mpsbench_analysis.plots import all_figures  # noqa: E402
from mpsbench_analysis.report import build_report  # noqa: E402

REPO = HERE.parent.parent
OUT = REPO / "docs" / "images"
FIXTURE = Path("results/h100-2026-11-21/sweep.json.gz")  # relative: the report shows this name
LIMIT = 300_000


def _small_png(source: Path, target: Path) -> None:
    image = Image.open(source).convert("RGB")
    image.quantize(colors=256, method=Image.Quantize.FASTOCTREE).save(target, optimize=True)
    size = target.stat().st_size
    assert size < LIMIT, (target, size)
    print(f"{target.relative_to(REPO)}: {image.width}x{image.height}, {size // 1024} KB")


def _figures(rs, wanted: dict[str, str], work: Path) -> None:
    figures = all_figures(rs)
    try:
        for stem, fig in figures:
            if stem in wanted:
                raw = work / f"{stem}.png"
                problems, _ = layout_check.inspect(fig, raw)
                assert not problems, (stem, problems)
                _small_png(raw, OUT / wanted[stem])
    finally:
        for _, fig in figures:
            plt.close(fig)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        rs = load_results([REPO / FIXTURE])
        rs.contexts = {str(FIXTURE): c for c in rs.contexts.values()}
        _figures(rs, {"throughput_matmul_fp32": "figure-throughput-h100-matmul.png",
                      "mps-gain_matmul_fp32": "figure-mps-gain-h100-matmul.png",
                      "rank-times_matmul_fp32": "figure-rank-times-h100-matmul.png"}, work)
        app = load_results([figure_docs.write(work / "app.json", figure_docs.app_sweep(
            ("timeslice", "mps", "streams"), devices=2))])
        _figures(app, {"throughput_app_myapp": "figure-app-throughput-synthetic-2gpus.png"}, work)
        report = work / "report.html"
        report.write_text(build_report(rs), encoding="utf-8")
        shot = work / "report.png"
        if browser.CHROMIUM is None:
            raise SystemExit("needs chromium for the report screenshot")
        done = browser.chromium([f"--screenshot={shot}", report.as_uri()], work)
        assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
        _small_png(shot, OUT / "report-h100.png")


if __name__ == "__main__":
    main()
