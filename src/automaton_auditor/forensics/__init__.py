"""The detectives' forensics: facts read from the inputs, never opinions, one package per kind of
input. `git/` acquires the repository and reads its history, `code/` reads its Python source
(never importing or running it), `pdf/` reads the architecture report, `vision/` finds and
reads the report's diagrams, `diagrams/` parses diagram text (Mermaid, DOT, arrow chains), and
`crosscheck` compares the report's claims with the code after both are read.
"""
