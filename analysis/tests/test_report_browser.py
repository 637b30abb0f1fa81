"""The HTML report, opened in a real browser (headless Chromium) the way a reader opens it.

No browser driver: Chromium's own command line does it all.
* ``--dump-dom`` loads a copy of the report into which the test (not the
  report) put a small script; after the load event it measures the page
  where the reader sees it (1400 px wide) and with the report's print rules
  at A4's printable width, and writes what it found as JSON into the DOM,
  which --dump-dom prints.  ``--enable-logging=stderr`` puts every console
  message on stderr, where any "CONSOLE" line fails the test.
* ``--screenshot`` of the report itself (the artefact a person looks at,
  under $MPSBENCH_TEST_ARTIFACTS/report/ when that is set).
* ``--print-to-pdf``: the page prints.
The report is copied alone into an empty directory and Chromium gets a
proxy that does not exist, so a page that needed anything besides its own
file would show broken images or resource entries.

Skipped where Chromium is not installed (Debian package ``chromium``).
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

import figure_docs
from conftest import CPU_RUN, H100_SWEEP, RECORDED_REPORTS, recorded_report, recorded_results
from mpsbench_analysis import load_results
from mpsbench_analysis.report import build_report, command
from mpsbench_analysis.slowdown import slowdown_table
from mpsbench_analysis.verdicts import file_verdicts
from mpsbench_core.modes import sort_key as mode_sort_key, style as mode_style
from mpsbench_core.verdict import verdict_lines

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium (Debian package chromium)"),
              RECORDED_REPORTS]

WINDOW = (1400, 3000)
#: A4 less the report's 12 mm @page margins, in CSS pixels (96 per inch).
PRINT_WIDTH_PX = round((210 - 24) / 25.4 * 96)
PRINT_HEIGHT_PX = round((297 - 24) / 25.4 * 96)
CHECK_ID = "mpsbench-browser-check"

# Runs in the browser; RESULT_ID, PRINT_WIDTH and PRINT_HEIGHT are filled in below.
_CHECK_SCRIPT = """
<script>
(() => {
  const errors = [];
  window.addEventListener('error', e => errors.push('error: '
      + (e.message || (e.target && (e.target.src || e.target.href)) || e.type)), true);
  window.addEventListener('unhandledrejection', e => errors.push('unhandled rejection: ' + e.reason));
  const describe = el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '')
      + (el.className ? '.' + el.className : '')
      + ' "' + (el.textContent || el.alt || '').trim().slice(0, 40) + '"';
  const beyond = (limit) => [...document.body.querySelectorAll('*')].filter(el => {
      const r = el.getBoundingClientRect();
      return r.width > 0 && r.height > 0 && (r.right > limit + 1 || r.left < -1) && !el.closest('.scroll');
  }).map(describe);
  const hiddenByScroll = () => [...document.querySelectorAll('.scroll')]
      .filter(el => el.scrollWidth > el.clientWidth + 1).map(el => describe(el.querySelector('table') || el)
          + ' needs ' + el.scrollWidth + ' px, has ' + el.clientWidth);
  window.addEventListener('load', () => {
    const out = {errors};
    try {
    const vw = document.documentElement.clientWidth;
    out.viewport = vw;
    out.scrollWidth = document.documentElement.scrollWidth;
    out.pageHeight = document.documentElement.scrollHeight;
    out.headings = [...document.querySelectorAll('h2')].map(h => h.textContent.trim());
    out.context = [...document.querySelectorAll('dl.context')].map(dl =>
        Object.fromEntries([...dl.querySelectorAll('dt')].map(dt =>
            [dt.textContent, dt.nextElementSibling.textContent])));
    out.tables = [...document.querySelectorAll('table')].map(t => ({
        section: t.closest('section') ? t.closest('section').id : '',
        rows: t.tBodies.length ? t.tBodies[0].rows.length : 0,
        width: t.getBoundingClientRect().width, height: t.getBoundingClientRect().height}));
    const answer = document.querySelector('table.answer');
    out.answer = answer ? {first: document.querySelector('table') === answer,
        section: answer.closest('section').id, top: answer.getBoundingClientRect().top + window.scrollY,
        bottom: answer.getBoundingClientRect().bottom + window.scrollY,
        headers: [...answer.querySelectorAll('th')].map(th => th.textContent)} : null;
    out.verdicts = answer ? [...answer.tBodies[0].rows].map(row => ({
        text: row.querySelector('.what').textContent.trim() + ': ' + row.querySelector('.verdict').textContent.trim(),
        height: row.querySelector('.verdict').getBoundingClientRect().height})) : [];
    out.images = [...document.images].map(i => { const r = i.getBoundingClientRect();
        return {alt: i.alt, complete: i.complete, naturalWidth: i.naturalWidth, naturalHeight: i.naturalHeight,
                width: r.width, height: r.height, left: r.left, right: r.right, scheme: i.src.split(':')[0]}; });
    out.modes = [...document.querySelectorAll('ul.modes li')].map(li => [li.dataset.mode, li.dataset.color,
        li.querySelector('line').getAttribute('stroke')]);
    out.overflow = beyond(vw);
    out.scrolled = hiddenByScroll();
    out.resources = performance.getEntriesByType('resource').map(e => e.name);
    // print: the report's @media print rules applied on screen at A4's printable width
    const rules = [];
    for (const sheet of document.styleSheets) for (const rule of sheet.cssRules)
      if (rule.media && [...rule.media].includes('print')) for (const r of rule.cssRules) rules.push(r.cssText);
    const style = document.createElement('style');
    style.textContent = rules.join('\\n');
    document.head.appendChild(style);
    document.body.style.width = 'PRINT_WIDTHpx';
    const body = document.body.getBoundingClientRect();
    out.print = {rules: rules.length, width: body.width, overflow: beyond(body.right), scrolled: hiddenByScroll(),
      tooTall: [...document.images].filter(i => i.getBoundingClientRect().height > PRINT_HEIGHT).map(describe),
      nav: document.querySelector('nav') ? getComputedStyle(document.querySelector('nav')).display : 'missing'};
    style.remove();
    document.body.style.width = '';
    } catch (e) {
      errors.push('the check itself failed: ' + e);
    }
    const pre = document.createElement('pre');
    pre.id = 'RESULT_ID';
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  });
})();
</script>
"""


#: The sweep command of the metered case, as the sweep records it (context.sweep.command).
SWEEP_COMMAND = "harness/mpsbench-sweep --modes timeslice,mps -- --mix matmul/fp32/2048:2,inference/fp16/64:2"


def _metered_mix() -> dict:
    """A sweep with energy and SM activity on every kernel record and a mix of two tenants, made by a sweep
    whose command the context records (issues 27 and 28)."""
    import builder
    import energy_builder as eb
    from conftest import sweep_results
    records = [eb.with_activity(eb.with_energy(r, (0.4 if r["mode"] != "timeslice" else 0.5) * 1e-12),
                                80.0 if r["mode"] != "timeslice" else 40.0) for r in sweep_results()]
    doc = builder.document(records + builder.mix_sweep())
    doc["context"]["sweep"] = {"modes": ["timeslice", "mps"], "launcher": "mpirun", "jobs": [],
                               "command": SWEEP_COMMAND}
    return doc


def _cases() -> dict[str, object]:
    return {
        "h100-fixture": H100_SWEEP,
        "cpu-fixture": CPU_RUN,
        "2gpus-1size": figure_docs.sweep(("timeslice", "mps", "streams"), (4096,), devices=2,
                                         kernels=("matmul", "nbody")),
        "app-8gpus": figure_docs.app_sweep(figure_docs.MODES, devices=8),
        "energy-mix": _metered_mix(),
    }


CASES = _cases()


def artifact_dir(tmp_path: Path, *parts: str) -> Path:
    root = os.environ.get("MPSBENCH_TEST_ARTIFACTS")
    out = Path(root).joinpath(*parts) if root else tmp_path.joinpath(*parts)
    out.mkdir(parents=True, exist_ok=True)
    return out


def chromium(args: list[str], workdir: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    """Headless Chromium with a throw-away profile, no network (a dead proxy), console on stderr."""
    profile = workdir / "chromium-profile"
    env = dict(os.environ, HOME=str(workdir))
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
           "--disable-background-networking", "--disable-sync", "--hide-scrollbars", "--mute-audio",
           f"--user-data-dir={profile}", "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
           "--enable-logging=stderr", "--v=0", f"--window-size={WINDOW[0]},{WINDOW[1]}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=workdir)


def console_lines(stderr: str) -> list[str]:
    """Chromium's log lines for console messages of the page (an uncaught error, a console.error)."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


def report_file(case: str, tmp_path: Path) -> tuple[Path, object]:
    """The report of ``case``, alone in a fresh directory (nothing beside it to load)."""
    source = CASES[case]
    page = tmp_path / "page"
    page.mkdir()
    path = page / "report.html"
    if isinstance(source, Path):  # a committed file: its report is drawn once for every test that opens it
        path.write_text(recorded_report(source), encoding="utf-8")
        return path, recorded_results(source)
    rs = load_results([figure_docs.write(tmp_path / f"{case}.json", source)])
    path.write_text(build_report(rs), encoding="utf-8")
    return path, rs


def browser_check(report: Path, tmp_path: Path) -> tuple[dict, list[str]]:
    """What the injected script measured, and the console lines."""
    probe = tmp_path / "probe"
    probe.mkdir()
    script = _CHECK_SCRIPT.replace("RESULT_ID", CHECK_ID).replace("PRINT_WIDTH", str(PRINT_WIDTH_PX)) \
        .replace("PRINT_HEIGHT", str(PRINT_HEIGHT_PX))
    text = report.read_text(encoding="utf-8")
    assert text.count("<head>") == 1
    checked = probe / "report.html"
    checked.write_text(text.replace("<head>", "<head>" + script, 1), encoding="utf-8")
    done = chromium(["--virtual-time-budget=15000", "--dump-dom", checked.as_uri()], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    found = re.search(rf'<pre id="{CHECK_ID}">(.*?)</pre>', done.stdout, re.S)
    assert found, "the check script did not run:\n" + done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads(html.unescape(found.group(1))), console_lines(done.stderr)


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">II", data[16:24])


@pytest.mark.parametrize("case", list(CASES))
def test_report_in_a_browser(case: str, tmp_path: Path) -> None:
    report, rs = report_file(case, tmp_path)
    text = report.read_text(encoding="utf-8")
    # a single file: every image inline, nothing to fetch, nothing to run
    assert not re.search(r"<(script|link|iframe|object|embed)\b", text, re.I)
    assert not re.search(r"""\bsrc=["'](?!data:image/png;base64,)""", text)
    assert not re.search(r"""\bhref=["'](?!#)""", text)
    assert "url(" not in text and "@import" not in text

    out, console = browser_check(report, tmp_path)
    assert console == [] and out["errors"] == [], (console, out["errors"])
    assert out["resources"] == [], out["resources"]  # loaded nothing besides the file itself
    assert out["viewport"] == WINDOW[0]

    # what the reader came for: the answer first, the context, the gains behind it, every figure, the summary
    assert out["headings"] == ["Does MPS pay off?", "Context", "The gains behind the verdict", "Plots", "Summary"]
    answer = out["answer"]
    assert answer and answer["first"] and answer["section"] == "verdict", answer
    assert answer["headers"][0] == "what" and answer["headers"][-1] == "verdict", answer
    assert answer["top"] < 400, answer  # on the first screen, under the title
    assert len(out["context"]) == len(rs.contexts)
    for ctx, c in zip(out["context"], rs.contexts.values()):
        assert {"file", "date (UTC)", "GPUs", "device", "command"} <= set(ctx)
        assert ctx["command"] == command(c)  # the sweep's command where a sweep made the file
        if case == "energy-mix":
            assert ctx["command"] == SWEEP_COMMAND
        assert ctx["GPUs"] == (f"{len(c['gpus'])} × {c['gpus'][0]['name']} ({c['gpus'][0]['sm_count']} SMs)"
                               if c["gpus"] else "none (CPU device)")
    tables = out["tables"]
    assert all(t["width"] > 0 and t["height"] > 0 for t in tables), tables
    # every result in the summary, and a mix's slowdown table under it
    assert sum(t["rows"] for t in tables if t["section"] == "summary") == len(rs.results) + len(slowdown_table(rs))
    found = file_verdicts(rs)
    assert [v["text"] for v in out["verdicts"]] == [line.removeprefix("verdict: ") for line in verdict_lines(found)]
    assert all(v["height"] > 0 for v in out["verdicts"])
    crossover_tables = [t for t in tables if t["section"] == "crossover"]
    assert len(crossover_tables) == sum(bool(v.points) for v in found)
    if case != "cpu-fixture":  # the CPU run has no mps to weigh
        assert crossover_tables and all(t["rows"] > 0 for t in crossover_tables)

    images = out["images"]
    assert len(images) == text.count("<img ") and images, len(images)
    kernels = len(rs.results[["kernel", "precision"]].drop_duplicates())
    metered = len(rs.results[rs.results["joules_per_unit"].notna()][["kernel", "precision"]].drop_duplicates())
    assert 2 * kernels <= len(images) <= 3 * kernels + 2 * metered  # energy and SM activity where measured
    for image in images:
        assert image["scheme"] == "data" and image["complete"] and image["naturalWidth"] > 0, image
        assert image["width"] > 0 and image["height"] > 0 and image["right"] <= out["viewport"], image
        assert image["width"] <= image["naturalWidth"] + 0.5, image  # never blown up past its pixels
        assert "GPU" in image["alt"] or "host" in image["alt"], image["alt"]

    # the modes' key has the figures' colours
    modes = sorted(set(rs.results["mode_label"]), key=mode_sort_key)
    assert [m for m, _, _ in out["modes"]] == modes
    for mode, color, stroke in out["modes"]:
        assert color == stroke == mode_style(mode).color

    # layout: nothing wider than the window, no table cut by its scroll box at this width
    assert out["scrollWidth"] <= out["viewport"], out["overflow"]
    assert out["overflow"] == [] and out["scrolled"] == [], (out["overflow"], out["scrolled"])
    # print: the print rules apply, and at A4's width nothing sticks out and every figure fits a page
    printed = out["print"]
    assert printed["rules"] > 0 and printed["nav"] == "none"
    assert printed["overflow"] == [] and printed["scrolled"] == [] and printed["tooTall"] == [], printed

    # and the reader's view, kept as an artefact
    shots = artifact_dir(tmp_path, "report", case)
    shot = shots / "report.png"
    done = chromium([f"--screenshot={shot}", report.as_uri()], tmp_path)
    assert done.returncode == 0 and shot.exists(), done.stderr[-3000:]
    assert png_size(shot) == WINDOW
    assert console_lines(done.stderr) == []
    shutil.copy(report, shots / "report.html")


def test_report_prints(tmp_path: Path) -> None:
    """Chromium prints the H100 report to PDF: the plots and the summary each start a page."""
    report, rs = report_file("h100-fixture", tmp_path)
    pdf = artifact_dir(tmp_path, "report", "h100-fixture") / "report.pdf"
    done = chromium([f"--print-to-pdf={pdf}", "--no-pdf-header-footer", report.as_uri()], tmp_path)
    assert done.returncode == 0 and pdf.exists(), done.stderr[-3000:]
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF")
    pages = len(re.findall(rb"/Type\s*/Page\b", data))
    assert pages >= 3 or pages == 0, pages  # 0: the page objects are in compressed streams
