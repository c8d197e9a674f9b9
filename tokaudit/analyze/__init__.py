"""Analysis over the store: pricing, usage breakdowns (and, later, detectors)."""
