"""The MPS control daemons: the sweep's own (started per MPS mode by a guardian on each node, stopped and
verified gone), and those it finds (a daemon it did not start, another user's MPS processes)."""
