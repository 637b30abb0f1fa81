"""Running the planned jobs: the one protocol every kind follows (protocol.py), mpsbench jobs, the client
ramp's steps, and what a job's end means for the sweep's exit status (outcome.py)."""
