"""The documentation's links and the recorded data it cites (no GPU needed).

- every relative Markdown link and image of the README, docs/, results/, the
  sweep's and the examples' READMEs and analysis/README.md points at a file
  that is there, and a `#anchor` at a heading of that file;
- every path of a recorded file written out in that text (`results/.../x.json.gz`,
  `docs/images/x.png`) is there, so a renamed file cannot leave its old name behind;
- the README stays a front page (at most 250 lines);
- recorded results under results/ and docs/workshop/ are stored compressed
  (.json.gz), no generated HTML report is kept, and every PNG under docs/ is
  shown or linked by some document.

python3 -m unittest discover -s tests/docs -v
"""
import glob
import os
import re
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README_MAX_LINES = 250

LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^ {0,3}(```|~~~)")
HEADING = re.compile(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$")
# a recorded file named in the text: results/... or docs/..., ending in a data or figure extension
RECORDED = re.compile(r"(?<![\w./-])((?:results|docs)/[\w./-]+?\.(?:json\.gz|json|log\.gz|log|png|html|txt))(?![\w-]|\.\w)")


def documents():
    paths = [os.path.join(ROOT, "README.md"), os.path.join(ROOT, "harness", "sweep", "README.md"),
             os.path.join(ROOT, "examples", "README.md"), os.path.join(ROOT, "analysis", "README.md")]
    for top in ("docs", "results"):
        paths += glob.glob(os.path.join(ROOT, top, "**", "*.md"), recursive=True)
    return sorted(p for p in paths if os.path.isfile(p))


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`|\*\*|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading).strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors(path):
    found, seen = set(), {}
    in_fence = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if FENCE.match(line):
                in_fence = not in_fence
                continue
            m = None if in_fence else HEADING.match(line)
            if m:
                base = slug(m.group(1))
                n = seen.get(base, 0)
                seen[base] = n + 1
                found.add(base if n == 0 else f"{base}-{n}")
    return found


def links(path):
    """(line number, target) of every Markdown link and image outside fenced blocks; link texts may wrap."""
    prose = "".join("\n" if in_fence else line for _, line, in_fence in prose_and_code(path, keep_fences=True))
    for m in LINK.finditer(prose):
        yield prose.count("\n", 0, m.start(1)) + 1, m.group(1)


def prose_and_code(path, keep_fences=False):
    """(line number, text, inside a fenced block) for every line."""
    in_fence = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                in_fence = not in_fence
                if keep_fences:
                    yield number, line, True
                continue
            yield number, line, in_fence


class LinkTest(unittest.TestCase):
    def test_relative_links_and_anchors_resolve(self):
        problems = []
        for doc in documents():
            rel = os.path.relpath(doc, ROOT)
            for number, target in links(doc):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                    continue
                path, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(doc), path)) if path else doc
                if not os.path.exists(dest):
                    problems.append(f"{rel}:{number}: {target}: no such file")
                elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                    problems.append(f"{rel}:{number}: {target}: no heading #{anchor} in "
                                    f"{os.path.relpath(dest, ROOT)}")
        self.assertEqual(problems, [], "\n".join(problems))

    def test_recorded_files_named_in_the_text_are_there(self):
        problems = []
        for doc in documents():
            rel = os.path.relpath(doc, ROOT)
            for number, line, _ in prose_and_code(doc):
                for name in RECORDED.findall(line):
                    if "*" in name or not os.path.isdir(os.path.join(ROOT, name.split("/")[0], name.split("/")[1])):
                        continue  # a pattern, or an output directory of a command (docs/workshop/exN)
                    if not glob.glob(os.path.join(ROOT, name)):
                        problems.append(f"{rel}:{number}: {name} is not there")
        self.assertEqual(problems, [], "\n".join(problems))


class FrontPageAndDataTest(unittest.TestCase):
    def test_readme_is_a_front_page(self):
        with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
            lines = f.read().splitlines()
        self.assertLessEqual(len(lines), README_MAX_LINES,
                             "README.md: move depth into docs/ and link it from the guides table")

    def test_recorded_results_are_compressed_and_no_report_is_kept(self):
        plain = []
        for top in ("results", os.path.join("docs", "workshop")):
            for pattern in ("*.json", "*.html"):
                plain += glob.glob(os.path.join(ROOT, top, "**", pattern), recursive=True)
        self.assertEqual([os.path.relpath(p, ROOT) for p in plain], [],
                         "store recorded results as gzip -9 -n FILE.json (FILE.json.gz) and regenerate reports "
                         "with mpsbench-analyze report instead of keeping them")

    def test_every_figure_under_docs_is_cited(self):
        cited = set()
        for doc in documents():
            for _, target in links(doc):
                path = target.partition("#")[0]
                if path:
                    cited.add(os.path.normpath(os.path.join(os.path.dirname(doc), path)))
        figures = glob.glob(os.path.join(ROOT, "docs", "**", "*.png"), recursive=True)
        uncited = sorted(os.path.relpath(p, ROOT) for p in figures if os.path.normpath(p) not in cited)
        self.assertEqual(uncited, [], "a figure no document shows or links: cite it or remove it")


if __name__ == "__main__":
    unittest.main()
