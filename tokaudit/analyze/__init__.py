"""Analysis over the store: pricing, usage breakdowns, detectors and audits."""
