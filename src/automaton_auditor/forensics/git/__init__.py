"""The audited repository through git, treated as hostile: target parsing and the host allowlist
(`acquire`), the hardened git runner (`runner`), the clone strategy (`clone`), writing a
commit's files from the object store without checkout (`materialize`), the one HEAD reader
(`head`), and the history's facts (`history` reads the log, `story` turns it into findings).
"""
