"""mpsbench-sweep: run mpsbench once per GPU sharing mode and compare the modes.

Standard library only: the sweep has to run on bare GPU nodes (system Python,
no pip) where the MPS control daemon is managed.
"""
