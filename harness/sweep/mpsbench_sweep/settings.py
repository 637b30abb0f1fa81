"""The sweep's settings: built once from the command line (configure.py), never changed afterwards.

Frozen dataclasses, so a job cannot change what the next one runs with. What the run learns on the
way (the client limit the MPS daemon reports, each job's outcome) lives in the runner's own state;
the client ramp's new plan is a new Plan object (runner.py), recorded, not written into these.
"""
from dataclasses import dataclass
from typing import Optional, Tuple

from mpsbench_core.sweep_settings import SweepRecord

from .app.settings import AppSettings
from .launcher import Launcher
from .plan import Job


@dataclass(frozen=True)
class DaemonSettings:
    """How the sweep treats MPS control daemons: its own and those it finds."""

    control: Optional[str]     # the MPS control program, None when not found (then no MPS mode runs)
    existing_daemon: str       # refuse | use: a daemon this sweep did not start
    other_mps_users: str       # refuse | go-on: another user's MPS processes
    ready_timeout: float
    quit_timeout: float
    grace: float
    check_node: bool           # look for foreign daemons and other users (not on the CPU device)


@dataclass(frozen=True)
class RampSettings:
    """--client-ramp: the client limit the plan was made for, and whether the user gave it."""

    limit: int
    reason: str
    explicit: bool


@dataclass(frozen=True)
class SweepSettings:
    modes: Tuple[str, ...]
    jobs: Tuple[Job, ...]
    nodes: int
    gpus_per_node: int
    launcher: Launcher
    mpsbench: Optional[str]                # None when an application is farmed
    passthrough: Tuple[str, ...]           # the options for every mpsbench job
    app: Optional[AppSettings]
    ramp: Optional[RampSettings]
    daemon: DaemonSettings
    mem_device_ordinals: Optional[int]     # mps-mem: the device ordinals a rank enumerates
    output: str
    workdir: str
    keep_parts: bool
    timeout: float                         # per job
    gain_threshold: float
    record: SweepRecord                    # what context.sweep records of these settings
