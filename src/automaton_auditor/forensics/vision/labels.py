"""Fan-out labels written inside drawings made of characters.

A box drawing's text layer keeps its rows but loses its columns, so which box an arrow
leaves is often lost (`diagrams.boxes`), and a drawing cut by page footers may give no flow
at all. What the drawing says of itself survives: a box row reading ``PARALLEL FAN-OUT
(Judges)`` or ``LAYER 1: DETECTIVES (Parallel)`` states that the detectives or the judges
are drawn as parallel branches. Such a label is read only inside a drawing (a line with a
box wall, on a page that draws with characters), next to the group it names, and not when
the line says the split is absent or only planned.
"""

from __future__ import annotations

import re
from typing import Any

from automaton_auditor.forensics.diagrams.arrows import text_art
from automaton_auditor.forensics.diagrams.parse import SPLIT_LABEL
from automaton_auditor.state import DiagramFacts

_WALLS = "│┃║|"
_DRAWING = str.maketrans({c: " " for c in "│┃║|┌┐└┘├┤┬┴┼─━═▼▲►◄↓↑"})
# the group the label is about: the detectives or the judges, named as a group
_GROUPS = (("detective", re.compile(r"\b(?:detectives?|investigators?)\b", re.IGNORECASE)),
           ("judge", re.compile(r"\b(?:judges?|judicial|judiciary)\b", re.IGNORECASE)))
# a split the line denies or only plans is no drawn split
_NOT_DRAWN = re.compile(r"\b(?:not|no|never|future|planned|todo|later|sequential(?:ly)?|"
                        r"will)\b", re.IGNORECASE)
MAX_LABEL_CHARS = 80  # a box row, not a paragraph wrapped inside a frame
MAX_LABELS = 20
LABEL_CONFIDENCE = 0.7  # as for a flow read from a character drawing's rows


def split_labels(page_texts: list[str]) -> list[dict[str, Any]]:
    """The fan-out labels of the report's character drawings, in page order, as
    ``{"page", "label", "role"}`` (role: detective or judge)."""
    found: list[dict[str, Any]] = []
    for page, text in enumerate(page_texts, 1):
        if not text_art(text):
            continue
        for line in text.split("\n"):
            if not any(wall in line for wall in _WALLS) or not SPLIT_LABEL.search(line):
                continue
            label = " ".join(line.translate(_DRAWING).split())
            roles = [role for role, pattern in _GROUPS if pattern.search(label)]
            if len(roles) == 1 and len(label) <= MAX_LABEL_CHARS \
                    and not _NOT_DRAWN.search(label):
                found.append({"page": page, "label": label, "role": roles[0]})
                if len(found) >= MAX_LABELS:
                    return found
    return found


_PART_ROLES = {"parallel_detectives": "detective", "parallel_judges": "judge"}


def report_labels(diagrams: list[DiagramFacts]) -> list[dict[str, Any]]:
    """The report's fan-out labels (the same list rides on each text candidate)."""
    return next((list(d.data["split_labels"]) for d in diagrams
                 if d.data.get("split_labels")), [])


def labelled_part(diagrams: list[DiagramFacts], part: str) -> list[dict[str, Any]]:
    """The labels that say a courtroom part (the detectives' or the judges' fan-out) is
    drawn; none for the fan-in parts, which a label does not place."""
    role = _PART_ROLES.get(part)
    return [label for label in report_labels(diagrams) if label["role"] == role]


def quoted(labels: list[dict[str, Any]]) -> str:
    """The labels quoted with their pages."""
    return "; ".join(f"'{label['label']}' (p.{label['page']})" for label in labels[:4])
