"""What the nodes see of the state and what they hand back to it, from the execution model
(`execution`) of the main graph:

- ``graph.stale_reads``: a node reads a key that only nodes running in the same superstep
  (parallel branches) or later write. LangGraph gives every node of a step the state as it
  was before that step, so the read always sees the key's earlier value (the graph's input,
  or nothing), never what its siblings produce. Not established for a reader that runs after
  a router whose way depends on the run, or after a node whose writes are not known; a node
  that hands the value it read back under the same key (read-and-return) is left to the next
  fact;
- ``state.doubled_lists``: a node returns under a key with an add reducer (``operator.add``,
  or one of the repository's own that appends: `reducers.appending`) the very list it read
  from the state under that key (or returns the state itself, which holds it): LangGraph
  appends that list to itself, so every item it held is in it twice after each run of the
  node. ``add_messages`` merges by message id: no doubling. A node that runs before any other
  node writes the list (the first step, reading only the graph's input) doubles nothing a
  node produced: not charged, but said (it doubles what the graph was invoked with). Nor is
  the last node (its only edge to END, no node running after it) when nothing reads those
  lists from the state the run leaves (`final_state`): said, with what it hands back.

- ``graph.router_writes``: a router function stores into the state it is given
  (``state["errors"] = ... ; return "error_handler"``). A router only picks the way: LangGraph
  hands it the state to read and keeps nothing it stores (a store into a key, not a change
  made inside a value it holds), so the node it routes to never sees what it stored: an
  error route that loses the error it was taken for (a graph fact, not one of the schema).

Each fact quotes the lines it rests on (the read or return, and the reducer's declaration).
"""

from __future__ import annotations

import ast
from pathlib import Path

from automaton_auditor.forensics.code.callgraph import CallGraph, Key
from automaton_auditor.forensics.code.common import JSON, str_value
from automaton_auditor.forensics.code.execution import Model, Node, Run, state_accesses
from automaton_auditor.forensics.code.facts import quoted_finding
from automaton_auditor.forensics.code.final_state import final_state_read
from automaton_auditor.forensics.code.joins import each_way
from automaton_auditor.forensics.code.reducers import appending
from automaton_auditor.forensics.code.source import parse_file
from automaton_auditor.forensics.code.state_echo import state_value
from automaton_auditor.forensics.code.state_schema import class_fields, typed_classes
from automaton_auditor.forensics.code.topology import END
from automaton_auditor.state import Finding


def stateflow_findings(facts: dict[str, JSON], graph: CallGraph, model: Model, run: Run,
                       repo: Path | None, where: str) -> list[Finding]:
    """``graph.stale_reads``, ``state.doubled_lists`` and ``graph.router_writes``
    (see the module docstring)."""
    return [_stale_finding(model, run, graph, repo, where),
            _doubled_finding(facts, graph, model, run, repo, where),
            _router_writes(model, graph, repo, where)]


def _router_writes(model: Model, graph: CallGraph, repo: Path | None, where: str) -> Finding:
    """``graph.router_writes``: a router that stores into the state it is given."""
    found: set[tuple[str, int, str, str]] = set()  # path, line, router, key
    for routers in model.routers.values():
        for router in routers:
            if router.key is not None and router.key in graph.functions:
                found |= {(router.key[0], line, router.key[1], k) for k, line in
                          state_accesses(graph, router.key, stores=True).items()}
    stores = sorted(found)
    return quoted_finding(
        "graph.router_writes", "A router stores into the state (LangGraph discards it)",
        bool(stores), [(path, line) for path, line, _n, _k in stores], repo,
        ("; ".join(f"{name} stores {k}" for _p, _l, name, k in stores[:5]) + ": a router "
         "only picks the way; LangGraph hands it the state to read and keeps nothing it "
         "stores, so no node ever sees those values." if stores else
         "No router stores into the state it is given."), 0.7, where,
        writes=[f"{name}.{k}" for _p, _l, name, k in stores[:20]])


# --- reads that never see a write ---------------------------------------------------------------
def _writers(model: Model, key: str) -> list[str]:
    return sorted(n for n, node in model.nodes.items() if key in node.writes)


def _stale(model: Model, run: Run, name: str, node: Node,
           key: str) -> tuple[list[str], list[str]] | None:
    """(writers in the reader's step, writers only later) when no writer of `key` ever runs
    before `name` does, and another writer runs with it or after it; None otherwise."""
    reads = run.ran_at.get(name) or []
    others = [w for w in _writers(model, key) if w != name and run.ran_at.get(w)]
    if not reads or not others or key in node.echoes or node.whole:
        return None  # a node handing back what it read is the doubling fact's
    last = max(reads)
    writers = [*others, *([name] if key in node.writes else [])]
    if any(min(run.ran_at.get(w) or [last]) < last for w in writers):
        return None
    same = [w for w in others if set(run.ran_at[w]) & set(reads)]
    if not same and (model.input_keys is None or key in model.input_keys):
        return None  # only later writers, and the input may carry what the node reads
    return same, [w for w in others if w not in same]


def _established(model: Model, run: Run, name: str) -> bool:
    """False when what runs before `name` is a guess: it runs after a router whose way
    depends on the run, or a node whose writes are not known ran before it."""
    last = max(run.ran_at[name])
    if run.ambiguous_at and last >= run.ambiguous_at:
        return False
    return not any(min(steps) < last and (n not in model.nodes or model.nodes[n].open)
                   for n, steps in run.ran_at.items())


def _stale_finding(model: Model, run: Run, graph: CallGraph, repo: Path | None,
                   where: str) -> Finding:
    sent = {d for (_s, d), e in model.topo.edges.items() if e["kind"] == "send"}
    found: list[tuple[str, str, list[str], list[str]]] = []
    quotes: list[tuple[str, int]] = []
    guessed: list[str] = []
    for name, node in sorted(model.nodes.items()):
        if node.key is None or name in sent:  # a Send target reads its payload
            continue
        for key, line in sorted(node.reads.items()):
            stale = _stale(model, run, name, node, key) if key in model.channels else None
            if stale is None:
                continue
            if not _established(model, run, name):
                guessed.append(name)
                continue
            if not _fills_slot(graph, repo, node.key, key, [*stale[0], *stale[1]], model):
                continue
            found.append((name, key, *stale))
            quotes += [(node.key[0], line)] + [q for w in stale[0] if (q := _write(model, w, key))]
    text = "; ".join(f"{n} reads {k}, written only by {_who(same, later)}"
                     + (" (and by itself, after the read)" if k in model.nodes[n].writes else "")
                     for n, k, same, later in found)
    limitation = guessed and (f"{', '.join(sorted(set(guessed))[:4])} run(s) after a router "
                              "whose way depends on the run, or after a node whose writes "
                              "are not known")
    return quoted_finding(
        "graph.stale_reads", "A node reads a key only its parallel branches or later nodes "
        "write", bool(found), list(dict.fromkeys(quotes)), repo,
        (text + ": LangGraph gives every node of a superstep the state as it was before the "
         "step, so the read always sees the key's earlier value (the graph's input, or "
         "nothing), never what those nodes write." if found else
         f"No read is seen to miss a write; not established for {limitation}." if limitation
         else "Every key a node reads is written before it runs, or only by the input."),
        0.65, where, reads=[[n, k] for n, k, _s, _l in found],
        writers={f"{n}.{k}": sorted([*s, *later]) for n, k, s, later in found},
        **({"limitation": limitation} if limitation and not found else {}))


def _function(graph: CallGraph, repo: Path | None,
              key: Key) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    tree = parse_file(str(repo / key[0])) if repo is not None else None
    line = graph.functions[key]["line"]
    return next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
                 and n.lineno == line), None) if tree is not None else None


def _fills_slot(graph: CallGraph, repo: Path | None, key: Key, read: str, writers: list[str],
                model: Model) -> bool:
    """False when the reader only reads named entries of the key (``state["k"]["mine"]``,
    through a local too) that none of the writers' functions names: it reads its own slot of
    a shared dict, which nobody else fills. True when that is not known."""
    fn = _function(graph, repo, key)
    slots = _slots(fn, graph.functions[key], read) if fn is not None else None
    if not slots:
        return True
    for writer in writers:
        wkey = model.nodes[writer].key
        wfn = _function(graph, repo, wkey) if wkey is not None else None
        if wfn is None or slots & {c.value for c in ast.walk(wfn) if isinstance(c, ast.Constant)}:
            return True
    return False


def _slots(fn: ast.FunctionDef | ast.AsyncFunctionDef, facts: JSON, read: str) -> set[str] | None:
    """The entries a function reads from its state's value of `read` (`_fills_slot`), None
    when it uses that value otherwise (iterates it, hands it on, tests it)."""
    params = [str(p) for p in facts.get("params") or []]
    state = params[1] if params[:1] == ["self"] and len(params) > 1 else (params or [""])[0]
    parents = {id(c): n for n in ast.walk(fn) for c in ast.iter_child_nodes(n)}
    uses: list[ast.AST] = [
        n for n in ast.walk(fn) if isinstance(n, ast.Subscript | ast.Call | ast.Attribute)
        and not (isinstance(n, ast.Call) and getattr(n.func, "attr", "") != "get")
        and state_value(n, state, {}) == read]
    names: set[str] = set()
    slots: set[str] = set()
    while uses:
        use = uses.pop()
        parent = parents.get(id(use))
        target = _bound_name(parent)
        if isinstance(parent, ast.BoolOp):  # ``state.get("k") or {}``
            uses.append(parent)
        elif target is not None:
            if target not in names:  # every later read of the local is a use of the value
                names.add(target)
                uses += [n for n in ast.walk(fn) if isinstance(n, ast.Name)
                         and n.id == target and isinstance(n.ctx, ast.Load)]
        elif (slot := _slot(use, parents)) is not None:
            slots.add(slot)
        else:
            return None
    return slots


def _bound_name(node: ast.AST | None) -> str | None:
    """The local a plain ``x = value`` / ``x: T = value`` binds."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        return node.targets[0].id if isinstance(node.targets[0], ast.Name) else None
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    return None


def _slot(use: ast.AST, parents: dict[int, ast.AST]) -> str | None:
    """``x["name"]`` or ``x.get("name", ...)`` of `use`: the name."""
    parent = parents.get(id(use))
    if isinstance(parent, ast.Subscript) and parent.value is use:
        return str_value(parent.slice)
    call = parents.get(id(parent)) if parent is not None else None
    if isinstance(parent, ast.Attribute) and parent.attr == "get" and \
            isinstance(call, ast.Call) and call.func is parent and call.args:
        return str_value(call.args[0])
    return None


def _who(same: list[str], later: list[str]) -> str:
    parts = ([f"{', '.join(same)}, which run{'s' if len(same) == 1 else ''} in the same "
              "superstep (parallel branch)"] if same else []) + (
        [f"{', '.join(later)}, which run{'s' if len(later) == 1 else ''} only later"]
        if later else [])
    return " and by ".join(parts)


def _write(model: Model, name: str, key: str) -> tuple[str, int] | None:
    node = model.nodes[name]
    if key in node.write_lines and node.key is not None:
        return node.write_paths.get(key, node.key[0]), node.write_lines[key]
    return None


# --- lists appended to themselves ----------------------------------------------------------------
def _adders(facts: dict[str, JSON], model: Model, graph: CallGraph,
            repo: Path | None) -> dict[str, tuple[str, int]]:
    """The state's keys with an appending reducer (`reducers.appending`), each with where it
    is declared."""
    fields, _complete = class_fields(typed_classes(facts), model.topo.builder.get("state"))
    return {str(f["name"]): (path, int(f["line"])) for path, f in fields
            if appending(model.channels.get(f["name"]), graph, repo, path, int(f["line"]))}


Handed = dict[str, dict[str, tuple[str, int]]]  # node -> key -> the return handing it back


def _doubled(model: Model, run: Run, adders: dict[str, tuple[str, int]]
             ) -> tuple[Handed, Handed]:
    """(doubled, early) for the nodes that run: the returns that hand a key's own list back
    when a node may have written it, and those that do so only while it still holds just
    the graph's input (no node writes it before they run)."""
    out: Handed = {}
    early: Handed = {}
    memo: dict[tuple[str, str], bool] = {}
    ways: list[Run] | None = None
    for name, node in sorted(model.nodes.items()):
        if not run.runs.get(name):
            continue
        keys = {k: at for k, at in node.echoes.items() if k in adders}
        if node.whole:  # the state it was given holds every list; a key it sets is replaced
            keys.update({k: (node.whole_path, node.whole_line) for k in adders
                         if k not in node.writes and k not in keys})
        handed = keys
        keys = {k: at for k, at in keys.items() if not _still_empty(model, run, name, k, memo)}
        if keys and run.ambiguous_at and max(run.ran_at.get(name) or [0]) >= run.ambiguous_at:
            # past a router whose way the run does not know: each way is tried in turn
            ways = [r for _c, r in each_way(model, run) or []] if ways is None else ways
            keys = _on_some_way(model, ways, name, keys)
        if keys:
            out[name] = keys
        if len(keys) < len(handed):
            early[name] = {k: at for k, at in handed.items() if k not in keys}
    return out, early


def _on_some_way(model: Model, ways: list[Run], name: str,
                 keys: dict[str, tuple[str, int]]) -> dict[str, tuple[str, int]]:
    """The `keys` node `name` doubles on some way through the routers (`joins.each_way`):
    on a way where the list is still empty whenever it runs (an error route taken straight
    after the first node), it doubles nothing. All are kept when the ways are not known."""
    runs = [r for r in ways if r.runs.get(name)]
    if not runs or any(r.ambiguous_at for r in runs):
        return keys
    return {k: at for k, at in keys.items()
            if any(not _still_empty(model, r, name, k, {}) for r in runs)}


def _still_empty(model: Model, run: Run, name: str, key: str,
                 memo: dict[tuple[str, str], bool]) -> bool:
    """Whether the list under `key` holds only the graph's input whenever `name` runs: no
    other node that writes it runs before `name`'s last run (a node returning the whole
    state writes it only if it was no longer empty then), and every node that runs before
    it is known. Doubling it then doubles nothing a node produced."""
    last = max(run.ran_at.get(name) or [0])
    before = [n for n, steps in run.ran_at.items() if n != name and steps and min(steps) < last]
    if (run.ambiguous_at and last >= run.ambiguous_at) or any(
            n not in model.nodes or model.nodes[n].open for n in before):
        return False
    if (name, key) not in memo:  # each asked once; in a loop of such nodes: not empty
        memo[(name, key)] = False
        # a node handing the whole state back adds to the list only what it already held
        memo[(name, key)] = not any(
            key in model.nodes[n].writes or key in model.nodes[n].echoes
            or (model.nodes[n].whole and not _still_empty(model, run, n, key, memo))
            for n in before)
    return memo[(name, key)]


def _doubled_finding(facts: dict[str, JSON], graph: CallGraph, model: Model, run: Run,
                     repo: Path | None, where: str) -> Finding:
    adders = _adders(facts, model, graph, repo)
    doubled, early = _doubled(model, run, adders)
    # the last node's doubling reaches only what reads the final state
    unread = {n: per for n, per in doubled.items() if _last(model, run, n)
              and not final_state_read(repo, facts, set(model.channels), set(per))}
    doubled = {n: per for n, per in doubled.items() if n not in unread}
    early = {} if doubled else early  # said only where no list is doubled
    keys = sorted({k for per in doubled.values() for k in per})
    shown = doubled or early or unread
    quotes = list(dict.fromkeys([*(at for per in shown.values() for at in per.values()),
                                 *(adders[k] for k in sorted({k for p in shown.values()
                                                              for k in p}))]))
    return quoted_finding(
        "state.doubled_lists", "A node hands an add-reducer list back to itself",
        bool(doubled), quotes, repo,
        (f"{_handed_text(model, doubled)}: {', '.join(keys)} "
         f"{'has' if len(keys) == 1 else 'have'} an appending reducer "
         f"({', '.join(sorted({str(model.channels[k]) for k in keys}))}), so LangGraph "
         "appends the returned list to the one it holds: every item already there is in it "
         "twice after each run of the node." if doubled else
         _early_text(model, early) if early else
         _unread_text(model, unread).lstrip() if unread else
         "No node returns an add-reducer list it read from the state." if adders else
         "The state declares no add reducer.")
        + (_unread_text(model, unread) if doubled or early else ""),
        0.65, where, nodes={n: sorted(per) for n, per in doubled.items()}, keys=keys,
        **({"early": {n: sorted(per) for n, per in early.items()}} if early else {}),
        **({"unread": {n: sorted(per) for n, per in unread.items()}} if unread else {}))


def _last(model: Model, run: Run, name: str) -> bool:
    """Whether no node runs after `name`: its only way on is to END (no router, no
    ``Command``), and no node of the run (another branch) runs in a later step."""
    ways = [d for (s, d) in model.topo.edges if s == name]
    last = max(run.ran_at.get(name) or [0])
    return bool(ways) and set(ways) == {END} and name not in model.routers and \
        not model.nodes[name].gotos and not model.nodes[name].open and \
        all(max(steps) <= last for steps in run.ran_at.values() if steps)


def _unread_text(model: Model, unread: Handed) -> str:
    """Doubling by the last node, whose final state nothing reads under those keys."""
    if not unread:
        return ""
    keys = sorted({k for per in unread.values() for k in per})
    return (f" {_handed_text(model, unread)} ({', '.join(keys)} with an appending reducer), "
            "but no node runs after it (its only edge goes to END) and the code that runs "
            "the graph reads none of these lists from the state the run leaves (no "
            "checkpointed thread is run again or read): the doubled items reach nothing.")


def _handed_text(model: Model, handed: Handed, read: str = "") -> str:
    """What each node hands back: the state it was given, or the keys (`read`: how)."""
    return "; ".join(
        f"{n} returns the state it was given, which holds {', '.join(sorted(per))}"
        if model.nodes[n].whole else f"{n} returns {', '.join(sorted(per))}{read}"
        for n, per in handed.items())


def _early_text(model: Model, early: Handed) -> str:
    """Returns that hand a list back before any node writes it: they double only what the
    graph was invoked with."""
    keys = sorted({k for per in early.values() for k in per})
    reducers = ", ".join(sorted({str(model.channels[k]) for k in keys}))
    handed = _handed_text(model, early, " holding what it read from the state")
    who = "it runs" if len(early) == 1 else "each runs"
    return (f"{handed} (appending reducer: {reducers}), and {who} before any node writes "
            f"{', '.join(keys)}: the list then holds just what the graph was "
            "invoked with, so those items (if any) come back twice, nothing a node produced.")
