"""The LLM judges' prompt templates, shipped inside the package as `assessor._prompts`.

Only here so the folder can be mapped into the package (`package-dir` in pyproject.toml).
"""
