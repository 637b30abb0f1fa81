#!/usr/bin/env python3
"""Stands in for mpsbench-meter (harness/sweep/mpsbench_sweep/app/meter.py has the protocol) with known counters:
each GPU draws FAKE_METER_POWER_W watts (default 250), so a span of S seconds is 250 x S joules per GPU, with an
uncertainty of 0.5 J per GPU; SM activity FAKE_METER_SM_ACTIVE percent (default 80), occupancy 40, DRAM bandwidth
30, tensor 10. FAKE_METER_NOT_READY=REASON: {"ready": false, "reason": REASON}, exit 2. FAKE_METER_NO_GPM=REASON:
gpu_activity unavailable with that reason. FAKE_METER_LOG=FILE: one line per span, "span_s=S". "stop AGO" ends the span AGO seconds before the command.
A broken meter: FAKE_METER_SM_ACTIVE or FAKE_METER_POWER_W out of range (250 %, -250 W) are answered as given;
FAKE_METER_RAW_BYTE=1 puts a byte that is not UTF-8 (0xff) into every answer to stop (in the method)."""
import json
import os
import sys
import time


def main():
    args = sys.argv[1:]
    uuids = args[1].split(",") if args[:1] == ["--gpus"] else ["GPU-fake-0"]
    if os.environ.get("FAKE_METER_NOT_READY"):
        print(json.dumps({"ready": False, "reason": os.environ["FAKE_METER_NOT_READY"]}), flush=True)
        return 2
    print(json.dumps({"ready": True, "gpus": [{"index": i, "uuid": u} for i, u in enumerate(uuids)]}), flush=True)
    power, sm = float(os.environ.get("FAKE_METER_POWER_W", "250")), float(os.environ.get("FAKE_METER_SM_ACTIVE", "80"))
    started = None
    for line in sys.stdin:
        if line.strip() == "start":
            started = time.monotonic()
        elif line.split()[:1] == ["stop"] and started is not None:
            ago = float(line.split()[1]) if len(line.split()) > 1 else 0.0  # "stop AGO": the span ended AGO s ago
            span = time.monotonic() - ago - started
            started = None
            no_gpm = os.environ.get("FAKE_METER_NO_GPM")
            activity = ({"available": False, "reason": no_gpm} if no_gpm else
                        {"available": True, "sm_active": sm, "sm_occupancy": 40.0, "dram_bw": 30.0,
                         "tensor_active": 10.0})
            per = [{"uuid": u, "index": i, "energy": {"available": True, "joules": power * span, "mean_power_w": power,
                                                    "span_s": span, "uncertainty": 0.5, "method": "fake counter"},
                    "gpu_activity": activity} for i, u in enumerate(uuids)]
            text = json.dumps({"span_s": span, "energy": {"available": True, "joules": power * span * len(uuids),
                                                          "mean_power_w": power * len(uuids), "span_s": span,
                                                          "uncertainty": 0.5 * len(uuids), "method": "fake counter"},
                               "gpu_activity": activity, "gpus": per})
            raw = text.encode()
            if os.environ.get("FAKE_METER_RAW_BYTE"):
                raw = raw.replace(b"fake counter", b"fake \xff counter")
            sys.stdout.buffer.write(raw + b"\n")
            sys.stdout.buffer.flush()
            if os.environ.get("FAKE_METER_LOG"):
                with open(os.environ["FAKE_METER_LOG"], "a") as f:
                    f.write(f"span_s={span}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
