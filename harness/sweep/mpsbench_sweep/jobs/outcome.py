"""What a job's end means for the sweep: its exit statuses, and the two ways a sweep stops early.

Exit statuses of the sweep (cli's --help repeats them):
- 0: every job ran and every result verified; 1: a result failed verification, or a farmed
  application's configuration failed (the sweep goes on to the next one);
- 2: bad input or a preflight failure, also when a job rejected its input (exit 2, one
  `mpsbench: error:` line, nothing measured): the sweep stops and shows the line;
- 3: a job failed: crashed (any other status, e.g. 134 after MPI_Abort), passed --timeout, or
  exited 2 because a rank's MPS state was wrong (not an MPS client, no thread percentage): that is
  the sharing set-up failing, not the user's input. The sweep stops rather than going on with the
  next mode: a crashed rank usually crashes again, a crash can leave the MPS server in a fault state,
  and every result so far is kept in the merged file anyway;
- 128 + signal: interrupted (130 SIGINT, 143 SIGTERM, 129 SIGHUP).
"""

EXIT_OK, EXIT_VERIFY, EXIT_INPUT, EXIT_FAILED = 0, 1, 2, 3


class Interrupted(BaseException):
    """A signal: a BaseException, so no `except Exception` can swallow it."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


class Stop(Exception):
    """The sweep must stop with this exit code; message says why (one line)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code, self.message = code, message
