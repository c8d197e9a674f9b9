"""Rendering results: terminal tables and CSV now; HTML/Markdown/JSON reports build on these."""
