"""``judges.skip_criteria``: the judges do not all rule on the same criteria.

The rubric asks that all three judges rule on the same evidence for each criterion. A judge
whose model call sits in a loop over items (the rubric's criteria) behind a test on the item
that skips it (``if dimension.target_artifact != "github_repo": continue`` before the call,
or the call under ``if <test on the item>:``) gives no opinion on the items the test skips.
When the personas' judges skip on different tests (one persona's judge skips the report
criteria, the others rule on every criterion), those criteria get fewer than three
opinions and no dialectic.

Tests are compared as written: one test in a helper every persona's judge runs, or the same
test written again in each judge, skips the same criteria for all of them, which this fact
does not charge. Only the routes
`judge_prompts` followed to each persona's model calls are read; when a persona's calls were
not followed, nothing is concluded.
"""

from __future__ import annotations

import ast
import itertools
import re
from pathlib import Path

from automaton_auditor.forensics.code.common import split_loc
from automaton_auditor.forensics.code.judge_coverage import chain_to
from automaton_auditor.forensics.code.judge_prompts import Prompt
from automaton_auditor.forensics.code.prompt_values import Step
from automaton_auditor.forensics.code.source import line_at
from automaton_auditor.state import Finding

FACET = "judges.skip_criteria"
GOAL = "The judges do not all rule on the same criteria (one skips some the others rule on)"
PERSONAS = 3
# what a loop over the rubric's criteria iterates (a loop over evidence items is another
# matter: skipping some of them is no criterion left without a judge)
CRITERIA = re.compile(r"dimension|criteri|rubric|\bdims?\b", re.I)
Skip = tuple[str, int, str]  # path, line, the test as written


def _reads(test: ast.expr, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(test))


def _loop_skips(path: str, loop: ast.For | ast.AsyncFor, below: list[ast.AST]) -> list[Skip]:
    """The tests on the loop's item that keep the statement `below[0]` of its body (and the
    call under it) from running for some items."""
    names = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
    held = next((i for i, s in enumerate(loop.body) if s is below[0]), None)
    if held is None:
        return []  # the call is in the loop's else: not run per item
    found = [(path, s.lineno, ast.unparse(s.test)[:160]) for s in loop.body[:held]
             if isinstance(s, ast.If) and not s.orelse and s.body and
             isinstance(s.body[-1], ast.Continue) and _reads(s.test, names)]
    for parent, child in itertools.pairwise(below):
        if isinstance(parent, ast.If) and any(s is child for s in parent.body) and \
                not parent.orelse and _reads(parent.test, names):
            found.append((path, parent.lineno, ast.unparse(parent.test)[:160]))
    return found


def route_skips(route: tuple[Step, ...]) -> list[Skip]:
    """The item tests of the loops over the rubric's criteria on the way to a model call that
    skip it for some criteria."""
    out: list[Skip] = []
    for step in route:
        chain = chain_to(step.fn, step.call) if step.fn and step.call else None
        for index, node in enumerate(chain or []):
            if isinstance(node, ast.For | ast.AsyncFor) and chain and index + 1 < len(chain) \
                    and CRITERIA.search(ast.unparse(node.iter)):
                out += _loop_skips(step.path, node, chain[index + 1:])
    return out


def skip_finding(repo: Path, prompts: dict[str, Prompt]) -> Finding:
    """``judges.skip_criteria`` for the personas' followed model calls (see the module)."""
    skips = {p: sorted({s for _call, route in prompt.sites for s in route_skips(route)},
                       key=lambda s: (s[0], s[1]))
             for p, prompt in prompts.items() if prompt.sites}
    # the same test, in one helper or written again in each judge, skips the same criteria
    tests = {p: frozenset(" ".join(t.split()) for *_w, t in s) for p, s in skips.items()}
    known = len(skips) == PERSONAS == len(prompts)
    found = known and len(set(tests.values())) > 1
    skippers = sorted(p for p, t in tests.items() if t)
    if found:
        said = "; ".join(
            f"{p} skips the criteria where {', '.join(f'`{t}`' for *_w, t in skips[p])} "
            f"({', '.join(f'{w}:{n}' for w, n, _t in skips[p])})" for p in skippers)
        others = sorted(p for p in skips if p not in skippers)
        rationale = (f"{said}" + (f"; {', '.join(others)} rule on every criterion" if others
                                  else "") + ": on the criteria skipped, fewer than three "
                     "judges rule.")
    elif not known:
        rationale = ("Not established: the model calls of "
                     f"{', '.join(sorted(set(prompts) - set(skips))) or 'some persona'} "
                     "were not followed." if prompts else "No persona's model call was followed.")
    else:
        rationale = ("The judges skip the same criteria: each rules on every criterion the "
                     "others rule on." if skippers else "No judge skips a criterion of its loop.")
    where = [s for p in skippers for s in skips[p]]
    return Finding(
        facet=FACET, goal=GOAL, found=found, pattern="failure",
        location=f"{where[0][0]}:{where[0][1]}" if found else ".",
        content="\n".join(line_at(repo, path, line, limit=160) for path, line, _t in
                          sorted(where, key=lambda s: split_loc(f"{s[0]}:{s[1]}"))[:6])
        if found else None,
        rationale=rationale, confidence=0.75 if found else 0.6,
        data={"skips": {p: [f"{w}:{n}" for w, n, _t in s] for p, s in skips.items()},
              "established": known})
