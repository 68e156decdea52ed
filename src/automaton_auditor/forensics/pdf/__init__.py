"""The architecture report (PDF and a few other formats), treated as hostile: safe ingestion with
docling's model-free pipeline (`ingest`, `model`), the structure docling leaves out
(`structure`), pypdfium2's text as a second extractor (`textlayer`), chunks for retrieval
(`chunks`), concept depth (`concepts`), the file paths it cites (`citations`) and the features
it claims (`claims`), opt-in OCR (`ocr`), and reading it in a second process (`prefetch`).
`reader` is the doc detective's entry point.
"""
