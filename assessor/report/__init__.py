"""Renderers: turn records from the library into terminal text, JSON, Markdown or HTML."""
