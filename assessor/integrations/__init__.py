"""Integrations sit at the edge: Slack, scheduled watching, the TRL callback.

They import the pipeline and its stages; nothing in the core imports them, so the core installs and runs
without their optional SDKs (`pip install "assessor[slack]"`, `"assessor[trl]"`).
"""
