"""``mpsbench-analyze``: the command line over the analysis modules.

Exit codes: 0 success; 1 ``compare``'s gate failed (a regression, a
missing configuration or an incomplete NEW file, NOISY with
--fail-on-noisy); 2 bad input or usage (for ``compare`` also two runs of a
different device kind, GPU model or GPU count).  Every error is caught
here, at the boundary, and printed as one line ``mpsbench-analyze: error:
FILE: field X: ...``; a traceback helps only the developer, who can get one
with MPSBENCH_ANALYZE_DEBUG=1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
from typing import Sequence

from mpsbench_core.agreement import AGREE_SHARE
from mpsbench_core.verdict import GAIN_THRESHOLD

from . import __version__
from .errors import AnalysisError
from .loader import load_results
from .regression_rule import Rule
from .safe_write import write_file
from .tables import FORMATS
from .verdicts import RECORDED

PROG = "mpsbench-analyze"

#: Where pip cannot install the analysis (README.md says the same).
OFFLINE = ("where pip cannot install this (an offline GPU node): copy the results file to any machine with\n"
           "mpsbench-analyze and run `mpsbench-analyze report FILE` there, or install the Debian packages\n"
           "python3-pandas python3-matplotlib python3-jsonschema and run it from the source tree:\n"
           "PYTHONPATH=analysis/src python3 -m mpsbench_analysis.cli report FILE")

#: How every output option treats an existing file (safe_write.py).
REPLACES = ("an existing regular file is replaced atomically; a symbolic link, FIFO, device or directory "
            "there is refused")


def _fraction(text: str) -> float:
    """'5%' or '0.05' -> 0.05; a bare number above 1 is refused as ambiguous."""
    try:
        value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not text.endswith("%") and value > 1:
        raise argparse.ArgumentTypeError(f"{text} is ambiguous: write {text}% or {value / 100:g}")
    if value < 0:
        raise argparse.ArgumentTypeError("must not be negative")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("must be positive")
    return value


COMPARE_DESCRIPTION = """\
Regression verdicts of NEW against BASE, per result matched on kernel,
precision, size, ranks per GPU, mode and kernel params, and per MPS gain:
FASTER/SLOWER when the median changed by more than --threshold and the
ranges of repetitions do not overlap (at least --min-samples each) or
Mann-Whitney p < --alpha with both CVs <= --max-cv; SAME within the
threshold; NOISY otherwise. Latency kernels also get a verdict on the p99
request latency (higher is worse; the ranks' p99s are the samples).

The run contexts are compared first. A different device kind (device.used),
GPU model (gpus[].name) or GPU count (len(gpus)) is an error; differences in
the GPUs' other fields, driver, CUDA runtime, cuBLAS, mpsbench version and
commit, MPI, settings (--allreduce size included), --mix, sharing modes and
kernels whose params changed are listed as notes in the report header. Host
names are not compared."""

COMPARE_EPILOG = """\
exit status:
  0  the gate passes: FASTER, SAME, RECOVERED, NOISY (without
     --fail-on-noisy) and configurations only in NEW (added) do not fail it
  1  the gate fails (the last line of the report says why):
     - a regression: SLOWER throughput or MPS gain, a higher p99 latency
       (SLOWER), a result failed in NEW but not in BASE, or one verified in
       BASE and not in NEW;
     - configurations of BASE missing from NEW (removed), or NEW has
       "complete": false, unless --allow-missing;
     - any NOISY verdict, with --fail-on-noisy
  2  bad input or usage: an unreadable or invalid file, no result in
     common, or a different device kind, GPU model or GPU count (unless
     --allow-context-mismatch, which turns that into a warning)"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description=textwrap.fill("Analyse mpsbench results files (JSON, or gzip-compressed .json.gz; "
        "schema mpsbench-results versions 1, 2 and 3). Several files (e.g. one per mode) are merged into one data "
        "set.", 78),
        epilog="exit status: 0 ok, 1 compare's gate failed (see compare --help) or agree's runs disagree, 2 bad input or usage\n\n"
        f"{OFFLINE}", formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def files(p: argparse.ArgumentParser) -> None:
        p.add_argument("files", nargs="+", metavar="FILE", help="mpsbench results file(s): .json or .json.gz")

    def threshold(p: argparse.ArgumentParser) -> None:
        p.add_argument("--threshold", type=_positive_float, default=None, help="the MPS gain that pays off "
                       f"(default: the one the run recorded, else {GAIN_THRESHOLD:g})")

    def formatted(p: argparse.ArgumentParser) -> None:
        p.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")
        p.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of standard output "
                       f"({REPLACES})")

    p = sub.add_parser("summary", help="throughput, MPS gain, speedup, fairness and efficiency per configuration",
                       description="Per kernel, precision and size: aggregate throughput by mode and ranks per "
                       "GPU, gain over timeslice, speedup over one rank, Jain fairness, efficiency "
                       "against the best single-rank throughput of the kernel, precision and mode, and the "
                       "noise of the median; marks flag results noisier than their target (2% without one) "
                       "and results with clock-throttled repetitions (a legend line explains them). Latency kernels "
                       "add their p50/p95/p99 request latency, --allreduce runs the kernel's and the collective's "
                       "time per iteration, and a mix (--mix) the slowdown of each tenant when sharing (table and "
                       "markdown: a second table; json: \"slowdown\"; csv: the main table only).")
    files(p)
    formatted(p)

    p = sub.add_parser("plot", help="PNG and SVG figures", description="Throughput vs ranks per GPU, MPS-gain "
                       "heatmaps and per-rank iteration times, one figure per kernel and precision; for a latency "
                       "kernel, request latency (p99, p50) vs throughput per size; for a mix, the slowdown heatmap "
                       "(a panel per mode).")
    files(p)
    p.add_argument("--outdir", default="mpsbench-plots", help="directory for the figures, created when missing; "
                   "refused when it is a symbolic link; figures of the same name in it are replaced, but only "
                   "regular files (default: %(default)s)")
    p.add_argument("--formats", default="png,svg", help="comma list of image formats (default: %(default)s)")

    p = sub.add_parser("verdict", help="does MPS pay off? the verdict lines mpsbench-sweep printed for the run",
                       description="One line per kernel (precision, params) and per application: where MPS pays "
                       "off and with how many ranks (copies) per GPU, with the energy side where the results have "
                       "energy; one per mix: what each mode does to each tenant against itself alone (slowdown, p99 "
                       "latency), naming the starved tenant and the mode that protects the latency tenant; exactly as "
                       "mpsbench-sweep printed them at the end of the run that made the file (the definitions: "
                       "mpsbench-analyze crossover --help). "
                       f"The gain that pays off is the one the run recorded ({RECORDED}), else "
                       f"{GAIN_THRESHOLD:g}, unless --threshold is given.")
    files(p)
    threshold(p)

    p = sub.add_parser("agree", help="do several runs of the same suite give the same answer? (exit 1 when not)",
                       description="Each FILE is one run of the same suite (say README command 1 on three "
                       "machines). Per configuration measured in mps and timeslice: for each two runs whether their "
                       "MPS gains are consistent (differ by no more than their two 95% intervals allow together), "
                       "and each run's gain and whether it falls inside every other run's interval; per kernel and "
                       "application: the points where one run says MPS pays off and another that it does not; each "
                       "run's A/A row; the joint verdict of the runs. They agree (exit 0) when no point is "
                       f"contradicted and at least {AGREE_SHARE:.0%} of the pairs are consistent; otherwise exit 1.")
    files(p)
    threshold(p)

    p = sub.add_parser("crossover", help="the verdict with the gains behind it: the sizes where MPS pays off and "
                       "with how many ranks per GPU (applications: the copies per GPU from which it pays off)",
                       description="Kernels, at each size: k = the fewest ranks per GPU whose mps throughput is "
                       "within noise of the fastest among those measured in both mps and timeslice, gain = mps / "
                       "timeslice at k with its 95% interval (from the spread between the run's rounds); MPS pays "
                       "off where the interval lies above THRESHOLD, does not where it lies below, and the data "
                       "cannot tell otherwise; the crossover is the range the intervals place it in. Applications: "
                       "the best configuration (the fewest copies per GPU within noise of the fastest), and the "
                       "same rule across copies per GPU. The sentences are the verdict's (mpsbench-analyze "
                       "verdict). --ranks and --mode ask other questions: the gain at a fixed ranks per GPU, or "
                       "another mode than mps against timeslice, labelled as such.")
    files(p)
    threshold(p)
    p.add_argument("--ranks", type=int, help="another question: the gain at this fixed ranks per GPU at every "
                   "size (kernels only), instead of the best ranks per GPU at each size")
    p.add_argument("--mode", default="mps", help="another question: this mode against timeslice instead of mps: a "
                   "label such as mps-qos:50%%, or mps-qos for each of its percentages (default: mps)")
    formatted(p)

    p = sub.add_parser("compare", help="regression verdicts between two runs, as a CI gate (exit 1 when it fails)",
                       formatter_class=argparse.RawDescriptionHelpFormatter, description=COMPARE_DESCRIPTION,
                       epilog=COMPARE_EPILOG)
    p.add_argument("base", metavar="BASE", help="the reference results file")
    p.add_argument("new", metavar="NEW", help="the results file under test")
    p.add_argument("--threshold", type=_fraction, default=0.05, help="relative median change that matters, "
                   "e.g. 5%% or 0.05 (default: 5%%)")
    p.add_argument("--alpha", type=_fraction, default=0.05, help="significance level (default: 0.05)")
    p.add_argument("--max-cv", type=_fraction, default=0.10, help="largest CV for a p-value verdict "
                   "(default: 10%%)")
    p.add_argument("--min-samples", type=int, default=3, help="repetitions per side needed for the "
                   "non-overlap rule (default: 3)")
    p.add_argument("--markdown", metavar="FILE", help=f"also write a Markdown summary (for a CI job page; "
                   f"{REPLACES})")
    p.add_argument("--allow-context-mismatch", action="store_true", help="compare runs of a different device "
                   "kind, GPU model or GPU count (a warning instead of exit 2)")
    p.add_argument("--allow-missing", action="store_true", help="pass although configurations of BASE are "
                   "missing from NEW or NEW is incomplete (\"complete\": false)")
    p.add_argument("--fail-on-noisy", action="store_true", help="fail (exit 1) on any NOISY verdict too")

    p = sub.add_parser("report", help="one self-contained HTML report, the answer table first",
                       description="One HTML file, images embedded: the answer table first (per kernel and "
                       "precision, farmed program and mix: best ranks per GPU, MPS gain, crossover, energy side, the "
                       "verdict sentence), the context (the sweep command that made the file), the gains behind each "
                       "verdict, the figures (energy per unit of work and SM activity where measured) and the "
                       "summary. Where pip cannot install the analysis (an offline GPU node): mpsbench-analyze --help "
                       "says how to make the report elsewhere or from Debian's packages.")
    files(p)
    p.add_argument("--output", "-o", default="mpsbench-report.html", help=f"HTML file ({REPLACES}; "
                   "default: %(default)s)")
    threshold(p)

    p = sub.add_parser("export", help="convert to another benchmark format",
                       description="gbench: Google Benchmark JSON, one entry per repetition plus median, "
                       "mean and stddev aggregates (real_time = window / iterations, in ns).")
    files(p)
    p.add_argument("--format", choices=["gbench"], default="gbench", help="target format (default: gbench)")
    p.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of standard output "
                   f"({REPLACES})")
    return parser


def _emit(text: str, output: str | None) -> None:
    if output:
        write_file(output, text)
    else:
        sys.stdout.write(text)


def run(args: argparse.Namespace) -> int:
    """Executes a parsed command; returns the exit status."""
    if args.command == "summary":
        from .summary import summary_text
        _emit(summary_text(load_results(args.files), args.format), args.output)
    elif args.command == "verdict":
        from .verdicts import verdict_text
        _emit(verdict_text(load_results(args.files), args.threshold), None)
    elif args.command == "agree":
        from .agree import agree
        found, text = agree(args.files, args.threshold)
        _emit("".join(line + "\n" for line in text), None)
        return 0 if found.agree else 1
    elif args.command == "crossover":
        from .crossover import all_crossovers
        from .crossover_text import render_crossovers
        found = all_crossovers(load_results(args.files), args.threshold, args.ranks, args.mode)
        _emit(render_crossovers(found, args.format), args.output)
    elif args.command == "plot":
        from .plots import write_plots
        formats = tuple(f.strip().lower() for f in args.formats.split(",") if f.strip())
        bad = [f for f in formats if f not in ("png", "svg", "pdf")]
        if bad or not formats:
            raise AnalysisError(f"unsupported image format(s) {', '.join(bad) or '(none)'}; use png, svg, pdf")
        for path in write_plots(load_results(args.files), args.outdir, formats):
            print(path)
    elif args.command == "compare":
        from .compare import compare
        from .compare_text import render_comparison
        from .context import differs_from_base
        rule = Rule(args.threshold, args.alpha, args.max_cv, args.min_samples)
        result = compare(load_results([args.base]), load_results([args.new]), rule,
                         allow_context_mismatch=args.allow_context_mismatch)
        for d in result.context:
            if d.mismatch:
                print(f"{PROG}: warning: {args.new}: {differs_from_base([d])} "
                      f"(compared anyway: --allow-context-mismatch)", file=sys.stderr)
        failures = result.gate_failures(allow_missing=args.allow_missing, fail_on_noisy=args.fail_on_noisy)
        _emit(render_comparison(result, "table", args.base, args.new, failures), None)
        if args.markdown:
            _emit(render_comparison(result, "markdown", args.base, args.new, failures), args.markdown)
        return 1 if failures else 0
    elif args.command == "report":
        from .report import build_report
        _emit(build_report(load_results(args.files), args.threshold), args.output)
        print(args.output)
    elif args.command == "export":
        from .export import to_gbench
        _emit(json.dumps(to_gbench(load_results(args.files)), indent=2) + "\n", args.output)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit status instead of raising."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors
        return int(exc.code or 0)
    try:
        return run(args)
    except AnalysisError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        sys.stderr.close()  # output piped into e.g. head: not an error
        return 0
    except Exception as exc:  # noqa: BLE001 - the promise is: no traceback for users
        if os.environ.get("MPSBENCH_ANALYZE_DEBUG"):
            raise
        print(f"{PROG}: error: internal error: {type(exc).__name__}: {exc} "
              f"(set MPSBENCH_ANALYZE_DEBUG=1 for a traceback)", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
