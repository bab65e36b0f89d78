"""Work items exported from the trackers teams use (GitHub Issues, Jira), read into canonical form."""
