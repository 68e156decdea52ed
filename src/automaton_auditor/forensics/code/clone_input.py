"""What the clone is given: the URL checks before it (in the clone function, a validator, or
an earlier graph node: `url_gates`), how far they go, authentication failures and a local
path used in place of a clone."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from automaton_auditor.forensics.code.callgraph import CallGraph
from automaton_auditor.forensics.code.clone_errors import auth_finding
from automaton_auditor.forensics.code.common import JSON, split_loc
from automaton_auditor.forensics.code.facts import call_finding
from automaton_auditor.forensics.code.local_paths import local_path_finding
from automaton_auditor.forensics.code.source import line_at
from automaton_auditor.forensics.code.topology import Topology
from automaton_auditor.forensics.code.url_checks import dash_passes, url_tests
from automaton_auditor.forensics.code.url_checks import validators as url_validators
from automaton_auditor.forensics.code.url_gates import Gate, upstream_gates
from automaton_auditor.state import Finding
from automaton_auditor.text import clip

# a test that the URL is given or is a string, no URL validation
EMPTY_TEST = re.compile(r"^\s*(el)?if\s+not\s+\w*url\b|isinstance\(\s*\w*url\w*\s*,\s*str\b",
                        re.I)
KINDS = {"pattern": "a pattern match", "parse": "a parse of the URL",
         "membership": "a membership test", "checker": "a call of a checking function"}


def clone_input_findings(facts: dict[str, JSON], clones: list[tuple[str, JSON]],
                         repo: Path | None, graph: CallGraph,
                         live: Callable[[str, str], bool],
                         main: Topology | None = None) -> list[Finding]:
    """``safety.auth_errors``, ``safety.url_validation`` and ``safety.local_path`` for the
    clone calls that run (`live`: whether a function may run; `main`: the main graph, whose
    earlier nodes may check the URL)."""
    # a validator nothing runs validates no URL the tool clones
    validators = [v for v in url_validators(facts, repo) if live(*_function_at(facts, v))]
    checked, passing = url_tests(clones, repo)
    gates = {} if checked or validators else upstream_gates(clones, repo, graph, main)
    upstream = [g for g in gates.values() if g is not None] \
        if gates and all(gates.values()) else []
    empty = [] if checked or validators or upstream or repo is None else _emptiness_tests(
        facts, clones, repo)
    passing = [] if checked or validators or upstream else passing
    dashed = [] if validators or not checked else [
        f"{p}:{c['line']}" for p, c in clones if dash_passes(repo, p, int(c["line"]))]
    finding = call_finding(
        "safety.url_validation", "Repository URL is validated before cloning",
        bool(checked or validators or upstream), "success",
        checked or passing or empty or clones,
        (f"URL checks in the clone function: {len(checked)}; validator functions: "
         f"{', '.join(validators[:5]) or 'none'}."
         + "".join(f" Not a validation: {p}:{c['line']} `{c['snippet']}` tests the URL, "
                   "but neither branch raises, returns or skips the clone, so every URL "
                   "reaches git either way." for p, c in passing[:3])
         + (" The clone function only tests that the URL is given (not empty) or is a "
            "string, which checks no scheme, host or pattern." if empty else "")
         + (_upstream_text(upstream, sorted(gates)) if upstream else "")
         + (f" Weaker than it looks: at {', '.join(dashed[:3])} the URL goes into git's "
            "command list with no `--` before it, and the tests before the clone only look "
            "for forbidden substrings (or turn away values with a prefix): a URL beginning "
            "with '-' (`--upload-pack=...`) passes them all, and git reads it as an option."
            if dashed else "")),
        confidence=0.6, validators=validators[:20],
        upstream=sorted({g.check_node for g in upstream}), leading_dash=dashed[:20])
    if upstream:
        quote = "\n".join(dict.fromkeys(q for g in upstream for q in g.quotes))
        finding = finding.model_copy(update={"content": clip(quote, 4000), "location": ":".join(
            upstream[0].quotes[0].split(":", 2)[:2])})
    return [auth_finding(facts, clones, repo, graph), finding,
            local_path_finding(clones, repo, graph)]


def _upstream_text(gates: list[Gate], nodes: list[str]) -> str:
    """What the earlier node's check is, the route that stops the run, and how strong the
    test is."""
    gate = gates[0]
    places = [q.split(": ", 1)[0] for q in gate.quotes]
    strength = (f" A prefix test: any value that begins with '{gate.prefix}' passes (no "
                "host, path or pattern is checked); a value beginning with '-' cannot pass "
                "it, so git's options are kept out." if gate.prefix and not
                gate.prefix.startswith("-") else
                f" The test is {KINDS.get(gate.kind, 'a prefix test')}.")
    stop = (f"it raises at {places[1]}, which ends the run" if gate.raised else
            f"it records an error at {places[1]}, and the router reads it at {places[2]}"
            + (f" and returns at {', '.join(places[3:5])}" if len(places) > 3 else "")
            + " with no route to the cloning node")
    return (f" Checked before the clone's graph node instead: node '{gate.check_node}' lies "
            f"on every path from START to the cloning node(s) {', '.join(nodes[:4])} and "
            f"tests the URL at {places[0]}; when the test fails, {stop}, so the clone never "
            "runs on such a URL." + strength)


def _function_at(facts: dict[str, JSON], where: str) -> tuple[str, str]:
    """(path, qualified name) of the function defined at ``path:line``."""
    path, line = split_loc(where)
    return path, next((q for q, i in (facts[path].get("functions") or {}).items()
                       if int(i.get("line") or 0) == line), "")


def _emptiness_tests(facts: dict[str, JSON], clones: list[tuple[str, JSON]],
                     repo: Path) -> list[tuple[str, JSON]]:
    """Lines of the clone functions that test only that the URL is given or is a string
    (``if not url``, ``isinstance(url, str)``): quoted to say what the code does check."""
    found: list[tuple[str, JSON]] = []
    for path, call in clones:
        info = (facts[path].get("functions") or {}).get(call["func"]) or {}
        for line in range(int(info.get("line") or 0), int(info.get("end") or 0) + 1):
            code = line_at(repo, path, line).split(": ", 1)[-1]
            if EMPTY_TEST.search(code):
                found.append((path, {"line": line, "func": call["func"], "snippet": code}))
    return found[:5]
