"""The Python package index, read through the simple repository API (simple)."""
