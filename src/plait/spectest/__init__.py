"""Checked `test` records → their runs, verdicts and reports: what `plait test` (src/plait/cli/test.py) runs."""
