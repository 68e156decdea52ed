"""The report's diagrams: candidates found in the PDF (`candidates`: raster images, vector
drawings, diagram text), vector drawings read without a model (`vector` primitives, the
`flowchart` and `sequence` readers composed by `drawings`), an optional vision model
(`model_reader`), the findings (`findings`) and the comparison with the rebuilt graph
(`compare`). `inspector` is the vision detective's entry point.
"""
