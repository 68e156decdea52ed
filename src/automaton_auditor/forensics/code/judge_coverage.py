"""Whether each judge rules on every criterion, or gives one opinion per run.

The rubric asks that all three judges rule on the same evidence for each criterion. A judge
whose node makes one model call bound to a single-opinion schema, outside any loop, in a
node the graph runs once, returns one opinion per run: it rules on one criterion, and the
others get fewer than three opinions.

``judges.one_opinion`` is confirmed when, for each of the three personas whose model calls
`judge_prompts` follows:

- the persona's judges make one model call (one line; a call of the same model again in its
  except handler is a retry of it, no second call), an ``invoke``/``ainvoke`` of a runnable
  bound with ``with_structured_output`` (`answers.Answers`) to a repository model whose fields
  hold one opinion (scalars, lists of scalars, or a model that does so: no list or dict of
  models, no dict);
- the call is in no loop or comprehension on the way from the node to it (the route the
  prompt was followed by, and the callers above it up to the graph's node function), unless
  the loop is left once the call succeeds (a retry loop); a ``batch`` call counts as a loop;
- the main graph runs the node that makes it (its function, reached from the call through
  resolved calls, or the closure a factory returns for a node built at import), and no
  ``Send`` reaches that node and no cycle re-enters it.

A loop, a ``Send``, a cycle or a schema holding several opinions means the judge may rule on
several criteria: the fact is not confirmed (a caller that repeats the call, even where the
graph's wiring cannot be read; a loop over the judges themselves calls each once). A call,
schema, route or wiring that cannot be read leaves the fact not established otherwise. A
confirmed fact is charged on judicial_nuance like any failure fact, never a ceiling.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from automaton_auditor.forensics.code.answers import INVOKES, Answers, functions_in
from automaton_auditor.forensics.code.callgraph import CallGraph, Key
from automaton_auditor.forensics.code.common import JSON, dotted, split_loc
from automaton_auditor.forensics.code.judge_prompts import Prompt
from automaton_auditor.forensics.code.prompt_values import Program, Step
from automaton_auditor.forensics.code.source import line_at
from automaton_auditor.forensics.code.state_schema import class_fields, typed_classes
from automaton_auditor.forensics.code.topology import Topology, reach, running
from automaton_auditor.state import Finding

FACET = "judges.one_opinion"
GOAL = "Each judge gives one opinion per run (not one per rubric criterion)"
BATCHES = ("batch", "abatch")
SCALARS = {"str", "int", "float", "bool", "None", "Literal", "Optional", "Union", "Annotated",
           "Field", "conint", "confloat", "constr", "datetime", "date"}
SEQUENCES = {"list", "List", "Sequence", "tuple", "Tuple", "set", "Set", "Iterable",
             "FrozenSet", "frozenset"}
MAPPINGS = {"dict", "Dict", "Mapping", "MutableMapping", "OrderedDict", "DefaultDict"}
REPEATS = (ast.For, ast.AsyncFor, ast.While)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
MAX_CALLERS = 200  # functions read on the way up from a call to the graph's nodes
PERSONAS = 3


class Verdict(NamedTuple):
    """One persona's judges: ``one`` (one opinion per run), ``many`` (several may be
    given) or ``unknown``; why, and the lines that show it."""

    state: str
    why: str
    lines: tuple[str, ...] = ()


def chain_to(root: ast.AST, target: ast.AST) -> list[ast.AST] | None:
    """The nodes from `root` down to `target` (not into nested functions or classes)."""
    if root is target:
        return [root]
    for child in ast.iter_child_nodes(root):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        below = chain_to(child, target)
        if below is not None:
            return [root, *below]
    return None


def _exits(stmt: ast.stmt, breaks: bool) -> bool:
    """A statement that leaves the loop: ``return`` (``break`` when it belongs to the
    loop: `breaks`), or an ``if`` ending so."""
    leaves = (ast.Return, ast.Break) if breaks else (ast.Return,)
    if isinstance(stmt, leaves):
        return True
    return isinstance(stmt, ast.If) and bool(stmt.body) and isinstance(stmt.body[-1], leaves)


def _left_after(chain: list[ast.AST]) -> bool:
    """Whether the loop `chain` starts at leaves once the statement that holds the call
    completes (a retry loop: the call succeeds once, then the loop ends). Inside a loop
    nested in it, a ``break`` leaves only the inner loop: a ``return`` leaves both."""
    nested = False
    for parent, child in itertools.pairwise(chain):
        nested = nested or (parent is not chain[0] and isinstance(parent, REPEATS))
        for field in ("body", "orelse", "finalbody"):
            block = getattr(parent, field, None)
            if not isinstance(block, list) or not any(s is child for s in block):
                continue
            index = next(i for i, s in enumerate(block) if s is child)
            after = [*block[index + 1:], *(parent.orelse if isinstance(
                parent, ast.Try | ast.TryStar) and field == "body" else [])]
            if any(_exits(s, not nested) for s in after):
                return True
    return False


def _per_item(loop: ast.AST, call: ast.AST) -> bool:
    """A loop over the objects called (``for judge in judges: judge.review(e)``): once each."""
    target, func = getattr(loop, "target", None), getattr(call, "func", None)
    return isinstance(loop, ast.For | ast.AsyncFor) and isinstance(target, ast.Name) and \
        isinstance(func, ast.Attribute) and getattr(func.value, "id", None) == target.id


def repeats(fn: ast.AST, call: ast.AST) -> int | None:
    """The line of a loop, comprehension or lambda in `fn` that may run `call` more than
    once (None: the call runs at most once per run of `fn`)."""
    chain = chain_to(fn, call)
    for index, node in enumerate(chain or []):
        child = chain[index + 1] if chain and index + 1 < len(chain) else None
        if isinstance(node, REPEATS) and child is not None and (
                isinstance(node, ast.While) or any(s is child for s in node.body)) and \
                not any(s is child for s in node.orelse) and not _per_item(node, call) and \
                not _left_after(chain[index:] if chain else []):
            return node.lineno
        if isinstance(node, COMPREHENSIONS) and child is not None and not (
                child is node.generators[0] and index + 2 < len(chain or []) and
                chain is not None and chain[index + 2] is node.generators[0].iter):
            return node.lineno
        if isinstance(node, ast.Lambda):
            return node.lineno
    return None


class Reader:
    """What the judges' model calls give, read from the code and the graph."""

    def __init__(self, repo: Path, facts: dict[str, JSON], graph: CallGraph,
                 main: Topology) -> None:
        parsed = sorted(p for p, f in facts.items() if "skipped" not in f and "error" not in f)
        self.facts = facts
        self.classes = typed_classes(facts)
        models = {n for n, (_p, _c, root) in self.classes.items() if root == "BaseModel"}
        self.answers = Answers(Program(repo, parsed), models)
        for path in parsed:  # registers each method's class (for ``self.llm``)
            list(functions_in(self.answers, path))
        self.graph = graph
        self.main = main
        self.nodes = {name: graph.node_function(info) for name, info in main.nodes.items()}
        self._runs: dict[str, set[Key]] = {}

    def persona(self, prompt: Prompt) -> Verdict:
        """Whether this persona's judges give one opinion per run."""
        calls = self._first_tries(sorted({call for call, _route in prompt.sites},
                                         key=split_loc))
        if not calls:
            return Verdict("unknown", "its model call was not followed")
        # any call that may run more than once gives several opinions, however many calls
        verdicts = [self.route(call, route) for call, route in prompt.sites if call in calls]
        many = next((v for v in verdicts if v.state == "many"), None)
        if many is None and len(calls) > 1:
            return Verdict("unknown", f"{len(calls)} model calls ({', '.join(calls[:4])}): "
                           "which criteria each covers is not read")
        return many or next((v for v in verdicts if v.state == "unknown"), verdicts[0])

    def _first_tries(self, calls: list[str]) -> list[str]:
        """`calls` without those that call a model again in the except handler of another
        of them (`retries.handler_retries`): a retry of that call gives no opinion more."""
        again = {f"{path}:{c['line']}" for path in {split_loc(w)[0] for w in calls}
                 for c in self.facts.get(path, {}).get("calls") or []
                 if c.get("kind") == "retry" and f"{path}:{c.get('covers')}" in calls}
        return [c for c in calls if c not in again]

    def route(self, call: str, route: tuple[Step, ...]) -> Verdict:
        """One model call reached by `route` (the functions from the persona's entry)."""
        last = route[-1] if route else None
        if last is None or last.fn is None or last.call is None or \
                not isinstance(last.call.func, ast.Attribute):
            return Verdict("unknown", f"the model call at {call} is not read")
        if last.call.func.attr in BATCHES:
            return Verdict("many", f"a {last.call.func.attr} call at {call} (one answer per "
                           "item)", (call,))
        for step in route:
            if step.fn is None or step.call is None:
                continue
            line = repeats(step.fn, step.call)
            if line is not None:  # a lambda's caller (map, a retry helper) is not read
                how = "is made in a lambda, which may be called more than once" if any(
                    isinstance(n, ast.Lambda) and n.lineno == line for n in chain_to(
                        step.fn, step.call) or []) else "runs in a loop"
                return Verdict("many", f"the call at {call} {how} ({step.path}:{line})",
                               (f"{step.path}:{line}",))
        kind = self.answers.kind(last.path, last.fn, last.call.func.value) \
            if last.call.func.attr in INVOKES else None
        if kind is None or kind[0] != "runnable":  # one call of unknown answer per run
            wired = self.wiring(route)                # is still several in a loop above it
            return wired if wired.state == "many" else Verdict(
                "unknown", f"the schema the answer of {call} is bound to is not resolved")
        held = self.holds(kind[1])
        if held != "one":
            return Verdict("many" if held.startswith("many") else "unknown",
                           f"{kind[1]} (bound at {kind[2]}) {held.split(':', 1)[-1].strip()}")
        graph_says = self.wiring(route)
        if graph_says.state != "one":
            return graph_says
        return Verdict("one", f"one model call at {call}, bound to {kind[1]} at {kind[2]} "
                       f"(one opinion), not in a loop; {graph_says.why}",
                       (call, kind[2], *graph_says.lines))

    def holds(self, schema: str, depth: int = 0) -> str:
        """``one`` when `schema`'s fields hold one opinion; ``many: ...`` or ``unknown:
        ...`` with the field that says otherwise."""
        fields, complete = class_fields(self.classes, schema)
        if not complete or not fields or depth > 3:
            return "unknown: its fields are not all known"
        for _path, field in fields:
            held = self._annotation(str(field.get("annotation") or ""), depth)
            if held != "one":
                return f"{held.split(':')[0]}: its field {field['name']} is "\
                       f"{field.get('annotation') or 'untyped'}"
        return "one"

    def _annotation(self, text: str, depth: int) -> str:
        """``one``, ``many`` or ``unknown`` for one field's type."""
        try:
            tree = ast.parse(text, mode="eval")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return "unknown"
        prefixes = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        for node in ast.walk(tree):
            if id(node) in prefixes or not isinstance(node, ast.Name | ast.Attribute):
                continue  # ``typing`` of ``typing.List``
            name = node.id if isinstance(node, ast.Name) else node.attr
            if name in MAPPINGS:
                return "many"
            inner = _subscripted(tree, node) if name in SEQUENCES else None
            if name in SEQUENCES and (inner is None or any(
                    n not in SCALARS for n in _names(inner))):
                return "many"
            if name in self.classes and name not in SCALARS:
                held = self.holds(name, depth + 1)
                if held != "one":
                    return held.split(":")[0]
            elif name not in SCALARS and name not in SEQUENCES:
                return "unknown"
        return "one"

    def wiring(self, route: tuple[Step, ...]) -> Verdict:
        """Which main-graph nodes run the route, and whether each runs once per run."""
        # a function entered otherwise than by a call (a factory's closure) starts the chain
        cut = max((i + 1 for i, s in enumerate(route[:-1]) if s.call is None), default=0)
        start = self._key(route[cut])
        nodes, why = self._up(start) if start is not None else (set(), Verdict("unknown", ""))
        # a caller that repeats the call gives several opinions, whatever the wiring above it
        if why.state == "many":
            return why
        if running(self.main) is None:
            return Verdict("unknown", "the graph's wiring is not all known")
        if start is None:
            return Verdict("unknown", "the function that makes the call is not found")
        if why.state != "one":
            return why
        edges = list(self.main.edges)
        for node in sorted(nodes):
            sent = [s for (s, d), e in self.main.edges.items() if d == node and
                    e["kind"] == "send"]
            if sent:
                return Verdict("many", f"the graph sends to node {node} with Send (once per "
                               f"item it is handed, from {sent[0]})")
            if any(node in reach(edges, d) for (s, d) in edges if s == node):
                return Verdict("many", f"node {node} is re-entered through a cycle")
        ops = sorted({f"{self.main.nodes[n]['op']['path']}:{self.main.nodes[n]['op']['line']}"
                      for n in nodes}, key=split_loc)
        return Verdict("one", f"the graph runs node(s) {', '.join(sorted(nodes))} once "
                       "(no Send, no cycle)", tuple(ops))

    def _key(self, step: Step) -> Key | None:
        if step.fn is None:
            return None
        lines = {step.fn.lineno, *(d.lineno for d in step.fn.decorator_list)}
        return next(((step.path, q) for q, info in sorted(
            (self.facts.get(step.path, {}).get("functions") or {}).items())
            if int(info["line"]) in lines and q.rsplit(".", 1)[-1] == step.fn.name), None)

    def _up(self, start: Key) -> tuple[set[str], Verdict]:
        """The main-graph nodes that run `start`, through its callers (a call in a loop on
        the way: several opinions)."""
        found: set[str] = set()
        todo, seen = [start], set[Key]()
        while todo and len(seen) < MAX_CALLERS:
            key = todo.pop()
            if key in seen:
                continue
            seen.add(key)
            named = {n for n, k in self.nodes.items() if k == key}
            if named:
                found |= named
                continue
            callers = self.graph.callers(key)
            if not callers:
                made = self._made_by_factory(key)
                if not made:
                    return found, Verdict("unknown", f"no graph node is found to run "
                                          f"{key[1]} ({key[0]})")
                found |= made
            for caller, index in callers:
                line = int(self.graph.sites(caller)[index].get("line") or 0)
                loop = self._loop_at(caller, line, key[1].rsplit(".", 1)[-1])
                if loop is not None:
                    return found, Verdict("many", f"{key[1]} is called in a loop "
                                          f"({caller[0]}:{loop})", (f"{caller[0]}:{loop}",))
                todo.append(caller)
        if todo or not found:
            return found, Verdict("unknown", "the way from the graph's nodes to the call "
                                  "is not all read")
        return found, Verdict("one", "")

    def _made_by_factory(self, key: Key) -> set[str]:
        """When `key` is a closure its enclosing function returns (a factory's), the nodes
        built at import by a factory of its module (``p = make_judge(...)``) whose function
        is not resolved: they may run it. A function handed elsewhere as a value (``map``)
        is no closure: nothing is found."""
        outer, _, inner = key[1].rpartition(".")
        returned = {str(r.get("ref")) for r in (self.graph.functions.get(
            (key[0], outer)) or {}).get("returns") or [] if isinstance(r, dict)}
        if inner not in returned:
            return set()
        return {name for name, info in self.main.nodes.items() if self.nodes[name] is None
                and "." in str(info.get("fn") or "") and key[0] in self.graph.module_files(
                    str(info["fn"]).rsplit(".", 1)[0], str(info["op"]["path"]))}

    def _loop_at(self, key: Key, line: int, name: str) -> int | None:
        """A loop in function `key` repeating the call of `name` on `line` (else any there)."""
        info = (self.facts.get(key[0], {}).get("functions") or {}).get(key[1])
        mod = self.answers.program.module(key[0])
        if info is None or mod is None:
            return None
        fns = [f for top in mod.names.values() for f in ast.walk(top)
               if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef) and
               f.lineno == int(info["line"]) and f.name == key[1].rsplit(".", 1)[-1]]
        calls = [c for fn in fns[:1] for c in ast.walk(fn)
                 if isinstance(c, ast.Call) and c.lineno == line]
        calls = [c for c in calls if getattr(c.func, "attr", dotted(c.func)) == name] or calls
        return next((loop for c in calls if (loop := repeats(fns[0], c)) is not None), None)


def _subscripted(tree: ast.AST, name: ast.AST) -> ast.AST | None:
    """The brackets after a collection's name (``List[str]`` -> ``str``)."""
    return next((n.slice for n in ast.walk(tree) if isinstance(n, ast.Subscript) and
                 n.value is name), None)


def _names(node: ast.AST) -> Iterator[str]:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            yield sub.id
        elif isinstance(sub, ast.Attribute):
            yield sub.attr


def coverage_finding(repo: Path, facts: dict[str, JSON], graph: CallGraph,
                     main: Topology | None, prompts: dict[str, Prompt]) -> Finding:
    """``judges.one_opinion`` (see the module docstring)."""
    if main is None or len(prompts) < PERSONAS:
        said = {p: Verdict("unknown", "its model call was not followed") for p in
                ("Prosecutor", "Defense", "TechLead") if p not in prompts}
    else:
        reader = Reader(repo, facts, graph, main)
        said = {p: reader.persona(prompt) for p, prompt in prompts.items()}
    return _finding(repo, said)


def _finding(repo: Path, said: dict[str, Verdict]) -> Finding:
    many = {p: v for p, v in said.items() if v.state == "many"}
    unknown = {p: v for p, v in said.items() if v.state == "unknown"}
    confirmed = not many and not unknown and len(said) == PERSONAS
    lines = sorted({w for v in said.values() for w in v.lines}, key=split_loc)
    quote = "\n".join(line_at(repo, *split_loc(w), limit=160) for w in lines[:8]) or None
    groups: dict[str, list[str]] = {}
    for persona, verdict in said.items():  # judges that share their code share a reason
        groups.setdefault(verdict.why, []).append(persona)
    listing = "; ".join(f"{', '.join(ps)}: {why}" for why, ps in groups.items())
    if confirmed:
        text = (f"Each judge gives one opinion per run ({listing}): each rules on one "
                "criterion per run, not on every criterion of the rubric.")
    elif many:
        text = f"Not confirmed: a judge may give several opinions per run ({listing})."
    else:
        text = f"Not established: {listing}."
    return Finding(facet=FACET, goal=GOAL, found=confirmed, pattern="failure",
                   location=next((v.lines[0] for v in said.values() if v.lines), "."),
                   content=quote, confidence=0.8,
                   rationale=text,
                   data={"judges": {p: {"state": v.state, "why": v.why}
                                    for p, v in said.items()},
                         "established": not unknown or bool(many)})
