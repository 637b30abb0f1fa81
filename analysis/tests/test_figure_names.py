"""Figure file names are injective in the names they are made of (issue 36): two applications whose names
differ only in "/" and "," got one file, the second figure overwriting the first; the records keep the
names as they are."""

from __future__ import annotations

from pathlib import Path

import builder
from mpsbench_analysis import load_results
from mpsbench_analysis.figure_layout import MAX_STEM_PART, slug, stem_part_text
from mpsbench_analysis.plots import figure_makers, write_plots
from mpsbench_analysis.report import build_report

NAMES = ["a/b", "a,b", "a-b", "a_b", "a b", "a%2Fb", "a~b", "a.b", "a+b", "a=b", "a\u00e9b"]


def test_different_names_never_share_a_stem() -> None:
    stems = [slug("throughput", "app", name) for name in NAMES]
    assert len(set(stems)) == len(NAMES), stems
    for name, stem in zip(NAMES, stems):
        assert "/" not in stem and stem.count("_") == 2, stem
        assert stem_part_text(stem.split("_")[2]) == name
    # What needed no escaping keeps its stem: kernels, precisions, sizes, parameters.
    assert slug("throughput", "matmul", "fp32") == "throughput_matmul_fp32"
    assert slug("latency", "inference", "fp16", "hidden=2048,layers=4", "size-64") == \
        "latency_inference_fp16_hidden=2048,layers=4_size-64"


def test_a_long_name_is_cut_to_a_hash_of_its_exact_text() -> None:
    long_a, long_b = "\u30e2" * 199 + "a", "\u30e2" * 199 + "b"  # 600 bytes of UTF-8 each, percent-encoded
    parts = [slug(name) for name in (long_a, long_b, "x" * MAX_STEM_PART, "x" * (MAX_STEM_PART + 1))]
    assert all(len(p) <= MAX_STEM_PART for p in parts), [len(p) for p in parts]
    assert len(set(parts)) == 4 and parts[2] == "x" * MAX_STEM_PART and "~" in parts[3]


def test_two_applications_get_figures_of_their_own(tmp_path: Path) -> None:
    records = [builder.app_result(builder.flat(rate), mode=mode, ranks_per_gpu=k, name=name)
               for name, rate in (("a/b", 5.0), ("a,b", 7.0)) for mode in ("timeslice", "mps") for k in (1, 2)]
    rs = load_results([builder.write(tmp_path / "two-apps.json", builder.document(records))])
    assert set(rs.results["kernel"]) == {"a/b", "a,b"}  # the names as recorded
    stems = [stem for stem, _ in figure_makers(rs)]
    assert len(stems) == len(set(stems)) == 6, stems
    paths = write_plots(rs, tmp_path / "plots", formats=("png",))
    assert sorted(p.name for p in (tmp_path / "plots").iterdir()) == sorted(f"{s}.png" for s in stems)
    assert len(paths) == 6
    page = build_report(rs)
    assert "<h3>app a/b</h3>" in page and "<h3>app a,b</h3>" in page
