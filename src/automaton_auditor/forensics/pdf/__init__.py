"""The architecture report (PDF and a few other formats), treated as hostile: safe ingestion with
docling's model-free pipeline (`ingest`, `model`), the structure docling leaves out
(`structure`), chunks for retrieval (`chunks`), concept depth (`concepts`), what the report
claims (`claims`), opt-in OCR (`ocr`), and reading it in a second process (`prefetch`).
`reader` is the doc detective's entry point.
"""
