"""Searching an index: graphrag's four search engines over prepared objects, answers and
context-only results."""
