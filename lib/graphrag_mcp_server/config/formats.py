"""The document formats a data folder may hold, by file suffix, grouped by the graphrag reader that
reads them."""

TEXT = {".txt", ".md", ".markdown"}
OFFICE = {".docx", ".pptx", ".xlsx"}
MARKITDOWN = {".pdf", ".html", ".htm", *OFFICE}
STRUCTURED = {".csv": "csv", ".json": "json", ".jsonl": "jsonl"}
SUFFIXES = sorted(suffix.lstrip(".") for suffix in (*TEXT, *MARKITDOWN, *STRUCTURED))
"""Every file type a data folder may hold (the file pattern `init` writes)."""
