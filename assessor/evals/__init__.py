"""Labelled runs and the harness that scores judges on them (`assessor eval`)."""
