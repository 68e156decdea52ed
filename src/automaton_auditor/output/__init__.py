"""The audit report this tool writes (not the report it reads): assembled from the final state
(`build`), rendered as Markdown (`markdown`) and written with its JSON twin and the run
manifest (`files`).
"""
