"""Rendering results: terminal tables, and cost reports (HTML with plotly, Markdown, JSON, CSV/Parquet).

``build.build_report`` reads the store (``data``), computes every figure without I/O (``model``), and
writes the outputs (``html``, ``markdown``, ``export``); ``figures`` holds the pure plotly builders.
"""
