"""Context engine rules: packages, providers, contributions, merge decisions, briefings, agent signals."""
