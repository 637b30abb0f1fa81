"""The optional quality fields of newer results files for builder.py's records: ``noise``, ``warmup`` and
``clocks`` (older files have none of these), consistent with the record they are added to."""

from __future__ import annotations

import copy
import math
import statistics
from typing import Any, Sequence

NOISE_ESTIMATOR = "median_se_normal"
REFERENCE_MHZ = 1980.0


def relative_noise(samples: Sequence[float]) -> float | None:
    """1.2533 * stdev / (sqrt(n) * median), as harness/stats.cpp writes noise.relative; None below two."""
    if len(samples) < 2 or statistics.median(samples) == 0:
        return None
    return (math.pi / 2) ** 0.5 * statistics.stdev(samples) / (len(samples) ** 0.5 * abs(statistics.median(samples)))


def with_quality(record: dict[str, Any], affected: Sequence[bool] | None = None, target: float | None = None,
                 discarded: int = 0, relative: float | None | str = "auto", source: str = "nvml",
                 events: Sequence[str] = ("sw_thermal",)) -> dict[str, Any]:
    """``record`` with the optional ``noise``, ``warmup`` and ``clocks`` of newer files, consistent with it.

    affected: per repetition, whether its SM clock was throttled (default: none);
    target: the run's max_noise; relative: the noise figure ("auto": computed from the primary samples).
    A failed record gets what mpsbench writes for one: null noise figure, null warm-up and clocks.
    """
    out = copy.deepcopy(record)
    ok = out["status"] == "ok"
    samples = out["aggregate"][out["primary_metric"]]["samples"] if ok else []
    value = (relative_noise(samples) if relative == "auto" else relative) if ok else None
    out["noise"] = {"estimator": NOISE_ESTIMATOR, "relative": value, "target": target,
                    "met": None if value is None or target is None else value <= target}
    if out.get("kind") == "app":  # an application's record has a noise figure, and no warm-up or clocks
        return out
    if not ok:
        out.update(warmup=None, clocks=None)
        return out
    n = out["repetitions"]
    flags = [bool(a) for a in (affected if affected is not None else [False] * n)]
    sampled = source == "nvml"
    out["warmup"] = {"seconds": 0.31, "windows": 3, "stable": True}
    out["clocks"] = {
        "source": source, "note": "" if sampled else "NVML is not available", "threshold": 0.9,
        "reference_sm_clock_mhz": REFERENCE_MHZ if sampled else None,
        "affected_repetitions": sum(flags), "discarded_repetitions": discarded, "repetition_affected": flags,
        "gpus": [{"host": "node1", "gpu_index": 0, "gpu_uuid": "GPU-1234", "reference_sm_clock_mhz": REFERENCE_MHZ,
                  "samples": [40] * n, "sm_clock_mhz": [1500.0 if a else REFERENCE_MHZ for a in flags],
                  "min_sm_clock_mhz": [1410.0 if a else 1965.0 for a in flags],
                  "events": [list(events) if a else [] for a in flags]}] if sampled else [],
    }
    return out


def quality_settings(doc: dict[str, Any], max_noise: float | None = None, discard_throttled: bool = False) -> dict:
    """``doc`` with the settings of a newer mpsbench (adaptive repetitions, clock watching)."""
    doc["context"]["settings"].update(warmup_time_s=0.2, max_noise=max_noise,
                                      max_time_s=None if max_noise is None else 10.0,
                                      discard_throttled=discard_throttled, throttle_retries=3, clock_threshold=0.9)
    return doc
