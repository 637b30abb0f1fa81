"""Farming a user's own program (--app) instead of mpsbench: settings, the sweep's side of a configuration,
the per-node farmer and its copies, the probe of the copies' MPS state, and the results record (kind app)."""
