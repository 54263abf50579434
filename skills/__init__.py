"""The practitioner's guide and the algorithm cards, shipped inside the package as `assessor._skills`.

Only here so the folder can be mapped into the package (`package-dir` in pyproject.toml); the guide stays
at the repository root, where the docs point.
"""
