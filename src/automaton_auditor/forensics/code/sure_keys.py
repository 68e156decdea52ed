"""State keys a router surely finds truthy, whatever the run: the values the nodes that run
before it give them (`dead_routes` rules out the routes that need them empty).

A key holds a truthy value (``NONEMPTY``), or a container holding a truthy item (``FILLED``),
at the router of node ``S`` when

- ``S`` itself gives it one on every return (`execution.Node.writes`, `sure_values`): the
  router sees its own node's update (`execution.own_view`), or
- every node that writes the key (a node handing back the state it was given passes on what
  arrived) gives it one on every return, no node's writes are unknown, and every path of the
  graph from START to ``S`` passes through one of them: one ran before ``S``;

and the key's reducer is none or one that keeps what an update adds (``operator.add``,
``operator.or_``/``ior``, ``add_messages``, or a repository function doing one of these:
`reducers.operator_of`; another merge function of the repository may drop it).
A path that raises reaches no router: LangGraph aborts the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from automaton_auditor.forensics.code.execution import TRUTHY, Model, Router, any_open, own_view
from automaton_auditor.forensics.code.sure_values import FILLED, NONEMPTY
from automaton_auditor.forensics.code.topology import START, reach

# reducers that only add or replace what a node returns (a repository's own merge function
# may make items of its own)
KNOWN_REDUCERS = ("add", "iadd", "or_", "ior", "add_messages")


@dataclass(frozen=True)
class Sure:
    """A key's value at a router, known whatever the run, and the nodes that give it."""

    value: Any  # NONEMPTY or FILLED
    writers: tuple[str, ...]
    own: bool  # the router's own node gives it


def keeps(model: Model, key: str) -> bool:
    """Whether the channel `key` keeps what an update adds (no reducer: the update); its
    reducer as `reducers.operator_of` reads it (a repository's ``return a + b``: add)."""
    reducer = model.ops.get(key, model.channels.get(key))
    return not reducer or str(reducer).rsplit(".", 1)[-1] in KNOWN_REDUCERS


def sure_at(model: Model, source: str, router: Router) -> dict[str, Sure]:
    """key -> what the router on `source` surely finds under it (see the module docstring)."""
    node = model.nodes.get(source)
    own = own_view(model, router, dict(node.writes) if node else {})
    out = {k: Sure(v, (source,), True) for k, v in own.items()
           if v in TRUTHY and keeps(model, k)}
    if any_open(model):
        return out
    edges = [*model.topo.edges, *((n, g) for n, nd in model.nodes.items() for g in nd.gotos)]
    for key in model.channels:
        writers = sorted(n for n, nd in model.nodes.items() if key in nd.writes)
        values = {model.nodes[n].writes[key] for n in writers}
        if key in out or not writers or not keeps(model, key) or not values <= set(TRUTHY):
            continue
        # a path from START to the router's node that passes no writer: none may have run
        if source not in reach([(s, d) for s, d in edges if s not in writers], START):
            out[key] = Sure(NONEMPTY if NONEMPTY in values else FILLED, tuple(writers), False)
    return out
