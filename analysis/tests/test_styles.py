"""One look per mode (core modes.style, the registry's figure styles): told apart in colour, in grey and by
colour-blind readers, the same in every figure and in the report.

Colour-vision deficiencies are simulated with the matrices of Machado,
Oliveira & Fernandes (2009) at full severity on linear RGB; distances are
CIE76 Delta E in CIELAB (D65).  A Delta E around 10 is clearly different
side by side; lines and markers are small, so the test asks for more.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

import figure_docs
from mpsbench_analysis import load_results
from mpsbench_analysis.report import build_report
from mpsbench_analysis.validate import schema
from mpsbench_core.modes import NAMES, OKABE_ITO, style as mode_style

SCHEMA_MODES = schema()["definitions"]["mode"]["enum"]
MACHADO = {
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                   [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                     [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602],
                   [0.004733, 0.691367, 0.303900]],
}


def _linear(color: str) -> list[float]:
    def one(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    return [one(int(color[i:i + 2], 16) / 255) for i in (1, 3, 5)]


def _lab(rgb: list[float]) -> tuple[float, float, float]:
    x = (0.4124 * rgb[0] + 0.3576 * rgb[1] + 0.1805 * rgb[2]) / 0.95047
    y = 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]
    z = (0.0193 * rgb[0] + 0.1192 * rgb[1] + 0.9505 * rgb[2]) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116
    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def _seen(color: str, vision: str) -> tuple[float, float, float]:
    rgb = _linear(color)
    if vision != "normal":
        m = MACHADO[vision]
        rgb = [min(1.0, max(0.0, sum(m[i][j] * rgb[j] for j in range(3)))) for i in range(3)]
    return _lab(rgb)


def _delta_e(a: tuple, b: tuple) -> float:
    return sum((x - y) ** 2 for x, y in zip(a, b)) ** 0.5


def test_every_mode_of_the_schema_has_its_own_okabe_ito_colour_marker_and_dashes() -> None:
    styles = [mode_style(m) for m in SCHEMA_MODES]
    assert set(NAMES) == set(SCHEMA_MODES)
    assert {s.color for s in styles} <= set(OKABE_ITO.values())
    for attribute in ("color", "marker", "hatch", "dash_css"):
        values = [str(getattr(s, attribute)) for s in styles]
        assert len(set(values)) == len(values), attribute
    assert len({str(s.linestyle) for s in styles}) == len(styles)


@pytest.mark.parametrize("vision", ["normal", *MACHADO])
def test_modes_stay_apart_for_colour_blind_readers(vision: str) -> None:
    for a, b in itertools.combinations(SCHEMA_MODES, 2):
        distance = _delta_e(_seen(mode_style(a).color, vision), _seen(mode_style(b).color, vision))
        assert distance >= 15, (vision, a, b, distance)


def test_qos_percentages_are_one_hue_in_distinct_greys_and_markers() -> None:
    labels = ["mps-qos:100%", "mps-qos:50%", "mps-qos:25%", "mps-qos:12%"]
    styles = [mode_style(label) for label in labels]
    lightness = [_lab(_linear(s.color))[0] for s in styles]
    assert all(a - b >= 8 for a, b in zip(lightness, lightness[1:])), lightness  # darker for fewer threads
    assert len({s.marker for s in styles}) == len(styles)
    assert {s.linestyle for s in styles} == {mode_style("mps-qos").linestyle}
    assert mode_style("mps-qos:50%") == mode_style("mps-qos:50.0%")


def test_a_mode_looks_the_same_whatever_else_is_drawn() -> None:
    # a label's style depends on the label alone, never on what else a figure holds
    assert mode_style("mps-qos:25%") == mode_style("mps-qos:25%")
    assert mode_style("something-new").color == "#999999"


def test_the_analysis_draws_with_the_registry_only() -> None:
    """No second table of modes, colours or labels in the analysis: styles.py and the loader's mode order
    are gone, every figure and the report ask core."""
    import mpsbench_analysis
    from pathlib import Path as P
    source = P(mpsbench_analysis.__file__).parent
    assert not (source / "styles.py").exists()
    for path in source.glob("*.py"):
        text = path.read_text()
        assert "OKABE_ITO" not in text and "MODE_ORDER" not in text and "#E69F00" not in text, path.name


def test_report_key_uses_the_figure_colours(tmp_path: Path) -> None:
    path = figure_docs.write(tmp_path / "s.json", figure_docs.sweep(figure_docs.MODES, (1024,), ranks=(1, 2)))
    page = build_report(load_results([path]))
    for label in ("timeslice", "mps", "mps-qos:100%", "mps-qos:50%", "streams"):
        style = mode_style(label)
        assert f'<li data-mode="{label}" data-color="{style.color}">' in page, label
        assert f'stroke="{style.color}"' in page
