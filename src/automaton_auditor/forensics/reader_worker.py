"""The child side of `forensics.sandbox`: read one report task from stdin, answer on stdout.

Run as ``python -m automaton_auditor.forensics.reader_worker`` under the sandbox's ceilings.
Tasks: ``doc`` (the doc detective's facts: docling, pypdfium2's text, OCR) and ``vision``
(diagram candidates, rendered with pypdfium2). Whatever a library prints goes to stderr; only
the one JSON answer reaches the parent: ``{"ok": ...}`` or ``{"error": {"kind", "message"}}``.
"""

from __future__ import annotations

import base64
import json
import os
import sys
from pathlib import Path
from typing import Any

MAX_REQUEST_BYTES = 1 << 20


def _doc(request: dict[str, Any]) -> Any:
    from automaton_auditor.forensics.pdf.model import ReportLimits
    from automaton_auditor.forensics.pdf.reader import doc_findings, ingest_report
    from automaton_auditor.storage.facts import DocFacts

    report = ingest_report(Path(request["path"]), ReportLimits(**request["limits"]))
    findings, facts = doc_findings(report, list(request["terms"]))
    return DocFacts(findings=findings, report_facts=facts,
                    warnings=list(report.warnings)).model_dump(mode="json")


def _vision(request: dict[str, Any]) -> Any:
    from automaton_auditor.forensics.vision.candidates import VisionLimits
    from automaton_auditor.forensics.vision.inspector import find_diagrams

    diagrams, images = find_diagrams(Path(request["path"]), VisionLimits(**request["limits"]))
    return {"diagrams": [d.model_dump(mode="json") for d in diagrams],
            "images": [base64.b64encode(png).decode("ascii") for png in images]}


TASKS = {"doc": _doc, "vision": _vision}


def answer(request: dict[str, Any]) -> dict[str, Any]:
    """The reply to one request; every failure is an error kind and a one-line message."""
    from automaton_auditor.forensics.pdf.model import ReportError
    from automaton_auditor.forensics.vision.candidates import VisionError

    try:
        return {"ok": TASKS[str(request.get("task"))](request)}
    except ReportError as exc:
        return {"error": {"kind": exc.kind, "message": str(exc)}}
    except VisionError as exc:
        return {"error": {"kind": "corrupt", "message": str(exc)}}
    except MemoryError:
        return {"error": {"kind": "memory", "message": ""}}
    except Exception as exc:  # hostile input: any other failure is a crash, said in one line
        return {"error": {"kind": "crash",
                          "message": f"the PDF reader failed ({type(exc).__name__})"}}


def main() -> None:
    """Read the request, answer it on the real stdout, exit without interpreter teardown."""
    reply_fd = os.dup(1)
    os.dup2(2, 1)  # libraries that print must not corrupt the answer
    try:
        request = json.loads(sys.stdin.buffer.read(MAX_REQUEST_BYTES))
        reply = answer(request if isinstance(request, dict) else {})
    except ValueError:
        reply = {"error": {"kind": "crash", "message": "the PDF reader got no request"}}
    data = json.dumps(reply).encode("utf-8")
    view = memoryview(data)
    while view:
        view = view[os.write(reply_fd, view):]
    os._exit(0)  # docling's threads and caches need no orderly shutdown


if __name__ == "__main__":
    main()
