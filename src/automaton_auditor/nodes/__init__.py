"""The courtroom graph's nodes: `context` (input check), `detectives` (repo, doc, vision),
`aggregator` (fan-in and cross-checks), `judges` (one `Send` per criterion and persona),
`dialectics` (one re-evaluation round), `justice` (the Chief Justice), `report` (the writer).
Nodes only wire analysis packages to the state; `limits` turns settings into tool limits.
"""
