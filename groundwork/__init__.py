"""Groundwork: proposal-first work item enhancement, evidence search and notifications."""

__version__ = "0.1.0"
