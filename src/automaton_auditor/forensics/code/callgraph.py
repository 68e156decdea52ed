"""A small call graph of the audited repository, and where values come from across it.

Functions are keyed by ``(path, qualified name)`` (``("src/tools/git.py", "Repo.clone")``).
A call site recorded by `flow` is resolved through the file's imports (absolute and relative),
module aliases (``tools.run(...)``), ``self.method``/``cls.method`` (also in base classes),
nested functions, constructors and methods of objects built from the repository's own
classes. `sources` follows a value through locals, ``self`` attributes, helpers' returns (with
their parameters replaced by the caller's arguments) and library calls (whose result is taken
to derive from their arguments: ``Path(tmp) / "repo"``, ``os.path.join(tmp, name)``).
Depth is bounded and every listing is in a fixed order, so facts are deterministic.
"""

from __future__ import annotations

from collections.abc import Iterable

from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.definitions import Definitions, Key, Target

__all__ = ["MAX_DEPTH", "CallGraph", "Key", "Target"]

MAX_DEPTH = 6
PASS_THROUGH = {"partial", "RunnableLambda", "RunnableCallable"}  # they run their first arg
Found = tuple[frozenset[str], int]  # sources, and the deepest level their search went to


class CallGraph(Definitions):
    """Definitions, call resolution, callers and value sources over per-file facts."""

    def __init__(self, facts: dict[str, JSON]) -> None:
        super().__init__(facts)
        self._callers: dict[Key, list[tuple[Key, int]]] | None = None
        # A search that stayed within the bound gives the same answer from any depth that
        # leaves room for it: (sources, levels it went down). One the bound cut is only
        # valid at the depth it was asked from.
        self._whole: dict[tuple[Key, str], tuple[frozenset[str], int]] = {}
        self._cut: dict[tuple[Key, str, int], frozenset[str]] = {}
        self._making: set[tuple[str, str]] = set()  # module objects being resolved (`named`)

    # --- definitions ---------------------------------------------------------------------
    def flow(self, key: Key) -> JSON:
        """The `flow` summary of a function (empty when unknown)."""
        return (self.functions.get(key) or {}).get("flow") or {}

    def sites(self, key: Key) -> list[JSON]:
        """The call sites a function makes, in source order."""
        return self.flow(key).get("calls") or []

    # --- resolution ----------------------------------------------------------------------
    def resolve(self, key: Key, site: JSON) -> Target | None:
        """The definition a call site of function `key` calls, or None (library, unknown)."""
        return self._resolve(key, site, 0)[0]

    def _resolve(self, key: Key, site: JSON, depth: int) -> tuple[Target | None, int]:
        """`resolve`, looking for the receiver's classes (``m = Manager(); m.run()``) from
        `depth`, and the deepest level that search went to (`_atom`)."""
        name = str(site.get("name") or "")
        target, settled = self._by_name(key, name)
        rest = name.partition(".")[2]
        # ``self.tool.clone()``: the receiver is the attribute ``tool`` (``a:tool``), whose
        # classes are what any method of the class assigns to it
        held = name.startswith("self.") and rest.count(".") == 1
        if settled or ("." in rest and not held) or not site.get("recv"):
            return target, 0
        found, reach = self._sources(key, site["recv"], depth)
        for cls in _classes(found):
            hit = self.method(cls.path, cls.qual, rest.rpartition(".")[2])
            if hit is not None:
                return hit, reach
        return None, reach

    def _by_name(self, key: Key, name: str) -> tuple[Target | None, bool]:
        """The definition `name` names as written in `key`, and whether that settles it
        (not when it may be a method of the receiver's class)."""
        path, qual = key
        if not name:
            return None, True
        head, _, rest = name.partition(".")
        imports = self.facts.get(path, {}).get("imports") or {}
        if head in ("self", "cls") and rest and "." not in rest:
            owner = self.class_of(key)
            return (self.method(path, owner, rest) if owner else None), True
        if not rest:
            for scope in _enclosing(qual):  # a nested helper, then the module's own
                hit = self._symbol(path, f"{scope}.{head}" if scope else head)
                if hit is not None:
                    return hit, True
            return (self._dotted(path, imports[head]) if head in imports else None), True
        if head in imports:
            return self._dotted(path, f"{imports[head]}.{rest}"), True
        hit = self._symbol(path, name)  # ``Cls.static_method(...)`` in the same file
        return hit, hit is not None

    def instance_classes(self, key: Key, atoms: Iterable[str]) -> list[Target]:
        """Repository classes whose instances a value may be (``m = Manager(); m.run()``)."""
        return _classes(self.sources(key, list(atoms)))

    def named(self, path: str, ref: str, line: int | None = None) -> Key | None:
        """The function a name written in `path` (at `line`, when known) refers to (a graph
        node's function); a class stands for its ``__call__``. At a known line, names are
        looked up from the innermost function there, so ``self.detect`` written in a
        builder method is that class's method."""
        where = self.function_at(path, line) if line is not None else None
        target = self.resolve(where or (path, "<module>"), {"name": ref}) if ref else None
        if target is None and "." in ref:
            target = self._dotted(path, ref)
        if target is None and ref:
            target = self._bound_method(where or (path, "<module>"), ref)
        made = self.module_entry(path, ref, "objects") if target is None and ref else None
        if made is not None and (path, ref) not in self._making:
            # module-level ``prosecutor = make_judge("P", PROMPT)``: the closure it returns
            # (``a = b(); b = a()`` names no function: asked again inside, it is None)
            self._making.add((path, ref))
            try:
                return self.built_node(made[0], {"call": str(made[1])}, None)
            finally:
                self._making.discard((path, ref))
        if target is not None and target.is_class:
            target = self.method(target.path, target.qual, "__call__")
        if target is None or (target.path, target.qual) not in self.functions:
            return None
        return (target.path, target.qual)

    def _bound_method(self, key: Key, ref: str) -> Target | None:
        """``agent.run`` / ``self.agent.run`` where `key` (or its class, or the module) binds
        ``agent`` to one repository class's instance and nothing else: that class's method.
        Bound to anything more (another value, a parameter), it is not determined. The
        instance itself (a node ``self.prosecutor`` or ``judge``) runs its ``__call__``."""
        head, _, method = ref.rpartition(".")
        if head in ("", "self"):
            head, method = ref, "__call__"
        attr = head.removeprefix("self.")
        if "." in attr or not attr:
            return None
        found = self.sources(key, [f"a:{attr}" if head.startswith("self.") else f"v:{head}"])
        classes = _classes(found)
        if len(found) != 1 or len(classes) != 1:
            return None
        return self.method(classes[0].path, classes[0].qual, method)

    def target(self, path: str, name: str) -> Target | None:
        """The repository definition a name resolved through `path`'s imports refers to."""
        return self._symbol(path, name) or (self._dotted(path, name) if "." in name else None)

    def node_function(self, info: JSON, field: str = "fn") -> Key | None:
        """The function a graph operation names in `field` (a node's ``fn``, a router's
        ``router``), looked up where the operation is written (`named`)."""
        op = info["op"]
        ref = str(info.get(field) or "")
        if not ref and field == "fn" and op.get("wraps"):
            return self.built_node(op["path"], op["wraps"], op.get("line"))
        if not ref and field == "fn" and op.get("lambda"):
            return self.inline_lambda(op["path"], str(op["lambda"]))
        return self.named(op["path"], ref, op.get("line"))

    def built_node(self, path: str, value: object, line: int | None,
                   depth: int = 0) -> Key | None:
        """The function a node built by a call runs (`interp.Interp.call_value`): the callable
        handed to ``partial``/``RunnableLambda``, the callable a repository wrapper hands the
        answer of back (``def wrap(name, fn): def inner(state): return fn(state)``), an
        instance's ``__call__``, or the closure a factory returns (``make_judge(llm)``, also
        ``make_node(fn)`` whose closure calls ``fn`` but builds its own return value)."""
        if isinstance(value, dict) and value.get("ref"):
            return self.named(path, str(value["ref"]), line)
        if not isinstance(value, dict) or not value.get("call") or depth > 3:
            return None
        args, kw = list(value.get("args") or []), dict(value.get("kw") or {})
        if str(value.get("full") or "").rsplit(".", 1)[-1] in PASS_THROUGH:
            return self.built_node(path, args[0], line, depth + 1) if args else None
        maker = self.named(path, str(value["call"]), line)
        if maker is None or maker[1].endswith(".__call__"):
            return maker  # an unknown callable, or an instance of a repository class
        params = [p for p in self.functions[maker].get("params") or [] if p != "self"]
        # a return of the factory or its closure that hands back what the given callable
        # answers (``return fn(state)``, awaited, through a local): the node's answer is
        # that callable's. A closure that only calls it (``raw = fn(state); return
        # {"opinions": ...}``) answers for itself, so the node is the closure (below).
        answered = {str(out.get("call")) for key in self.functions
                    if key[0] == maker[0] and (key[1] + ".").startswith(maker[1] + ".")
                    for out in self.functions[key].get("outs") or []}
        passed = [*zip(params, args, strict=False), *kw.items()]
        runs = [arg for param, arg in passed if param in answered]
        if runs:  # a wrapper that runs the callable it is given (None when that is unknown)
            return next((k for a in runs if (k := self.built_node(path, a, line, depth + 1))),
                        None)
        returns = self.functions[maker].get("returns") or []
        # ``def traced(name, fn): return fn`` (else ``deco(name)(fn)``): it hands back the
        # callable it is given, which the node runs
        handed = [arg for param, arg in passed if {"open": param} in returns]
        if handed:
            return self.built_node(path, handed[0], line, depth + 1)
        for returned in returns:
            closure = (maker[0], f"{maker[1]}.{returned.get('ref')}")
            if returned.get("ref") and closure in self.functions:
                return closure
            # a factory that hands back another factory's answer (``def make_prosecutor(llm):
            # return make_judge(llm, "Prosecutor")``): the node is what that one builds
            built = self.built_node(maker[0], {"call": returned["call"]}, int(
                self.functions[maker]["line"]), depth + 1) if returned.get("call") else None
            if built is not None:
                return built
        return None

    def function_at(self, path: str, line: int) -> Key | None:
        """The innermost function of `path` whose body spans `line`."""
        spans = [(int(info["line"]), int(info.get("end") or info["line"]), qual) for qual, info
                 in (self.facts.get(path, {}).get("functions") or {}).items()]
        inside = [(start, qual) for start, end, qual in spans if start <= line <= end]
        return (path, max(inside)[1]) if inside else None

    def callees(self, key: Key) -> list[tuple[int, Target]]:
        """(site index, definition) for every call of `key` that resolves."""
        out = []
        for index, site in enumerate(self.sites(key)):
            target = self.resolve(key, site)
            if target is not None:
                out.append((index, target))
        return out

    def function_key(self, target: Target) -> Key | None:
        """The function a target runs: itself, or a class's ``__init__``."""
        if not target.is_class:
            return (target.path, target.qual)
        init = self.method(target.path, target.qual, "__init__")
        return (init.path, init.qual) if init is not None else None

    def callers(self, key: Key) -> list[tuple[Key, int]]:
        """(caller, site index) of every resolved call to `key`, in a fixed order."""
        if self._callers is None:
            index: dict[Key, list[tuple[Key, int]]] = {}
            for caller in self.functions:
                for site_index, target in self.callees(caller):
                    callee = self.function_key(target)
                    if callee is not None:
                        index.setdefault(callee, []).append((caller, site_index))
            self._callers = index
        return self._callers.get(key, [])

    def reachable(self, roots: Iterable[Key], depth: int = MAX_DEPTH) -> list[Key]:
        """Functions reachable from `roots` within `depth` calls, breadth first."""
        seen: list[Key] = []
        frontier = [r for r in roots if r in self.functions]
        for _ in range(depth + 1):
            nxt: list[Key] = []
            for key in frontier:
                if key in seen:
                    continue
                seen.append(key)
                for _index, target in self.callees(key):
                    callee = self.function_key(target)
                    if callee is not None and callee not in seen:
                        nxt.append(callee)
            frontier = nxt
        return seen

    # --- values --------------------------------------------------------------------------
    def sources(self, key: Key, atoms: list[str], depth: int = 0) -> frozenset[str]:
        """Where a value of function `key` comes from: ``t:<path>:<line>`` (a temp dir made
        there), ``s:<text>`` (a literal), ``p:<param>`` (a parameter of `key`) and
        ``o:<path>|<class>`` (an instance of a repository class). Each step (a name, an
        attribute, a call) goes one level down, `MAX_DEPTH` at most; the answer depends only
        on the question, never on what was asked before."""
        return self._sources(key, atoms, depth)[0]

    def _sources(self, key: Key, atoms: list[str], depth: int) -> Found:
        out: set[str] = set()
        deepest = 0
        for atom in atoms:
            found, reach = self._atom(key, atom, depth)
            out |= found
            deepest = max(deepest, reach)
        return frozenset(out), deepest

    def _atom(self, key: Key, atom: str, depth: int) -> Found:
        """An atom's sources, and the deepest level the search went to (past `MAX_DEPTH`
        when the bound cut it). No guard against cycles: the bound ends them, so the answer
        is a function of (key, atom, depth) alone, whatever is asked first."""
        kind, _, rest = atom.partition(":")
        if kind == "t":
            return frozenset({f"t:{key[0]}:{rest}"}), 0
        if kind in ("s", "p"):
            return frozenset({atom}), 0
        whole = self._whole.get((key, atom))
        if whole is not None and depth + whole[1] <= MAX_DEPTH:
            return whole[0], depth + whole[1]
        if depth > MAX_DEPTH:
            return frozenset(), depth
        cut = self._cut.get((key, atom, depth))
        if cut is not None:
            return cut, MAX_DEPTH + 1
        if kind == "v":
            found, reach = self._sources(key, self.flow(key).get("binds", {}).get(rest, []),
                                         depth + 1)
            if not found:
                found, more = self._module_object(key, rest, depth)
                reach = max(reach, more)
        elif kind == "a":
            found, reach = self._attribute(key, rest, depth)
        else:
            found, reach = self._call_value(key, int(rest), depth)
        reach = max(reach, depth)
        if reach <= MAX_DEPTH:
            self._whole[(key, atom)] = (found, reach - depth)
        else:
            self._cut[(key, atom, depth)] = found
        return found, reach

    def _module_object(self, key: Key, name: str, depth: int) -> Found:
        """A module-level ``name = Callee(...)`` of the function's file (or imported)."""
        callee = (self.facts.get(key[0], {}).get("objects") or {}).get(name)
        if callee is None:
            return frozenset(), 0
        target = self.resolve((key[0], "<module>"), {"name": callee})
        if target is None:
            return frozenset(), 0
        if target.is_class:
            return frozenset({f"o:{target.path}|{target.qual}"}), 0
        made = (target.path, target.qual)
        found, reach = self._sources(made, self.flow(made).get("rets", []), depth + 1)
        return frozenset(s for s in found if not s.startswith("p:")), reach

    def _attribute(self, key: Key, attr: str, depth: int) -> Found:
        """``self.<attr>``: everything any method of the class assigns to it."""
        owner = self.class_of(key)
        if owner is None:
            return frozenset(), 0
        out: set[str] = set()
        deepest = 0
        for other in self.functions:
            if other[0] == key[0] and other[1].startswith(owner + "."):
                bound = self.flow(other).get("attrs", {}).get(attr)
                if bound:
                    found, reach = self._sources(other, bound, depth + 1)
                    # another method's parameters mean nothing here: drop them
                    out |= {s for s in found if not (other != key and s.startswith("p:"))}
                    deepest = max(deepest, reach)
        prop = self.method(key[0], owner, attr)
        if prop is not None and any(str(d).endswith("property") for d in
                                    self.functions[(prop.path, prop.qual)]["decorators"]):
            # ``@property def root(self): return self._root``
            getter = (prop.path, prop.qual)
            found, reach = self._sources(getter, self.flow(getter).get("rets", []), depth + 1)
            out |= {s for s in found if not s.startswith("p:")}
            deepest = max(deepest, reach)
        return frozenset(out), deepest

    def _call_value(self, key: Key, index: int, depth: int) -> Found:
        sites = self.sites(key)
        if index >= len(sites):
            return frozenset(), 0
        site = sites[index]
        target, deepest = self._resolve(key, site, depth + 1)
        passed = [*site.get("args", []), *site.get("kw", {}).values(), site.get("recv") or []]
        if target is None:  # a library call: its result derives from what it is given
            found, reach = self._sources(key, [a for group in passed for a in group], depth + 1)
            return found, max(deepest, reach)
        if target.is_class:
            return frozenset({f"o:{target.path}|{target.qual}"}), deepest
        callee = (target.path, target.qual)
        returned, reach = self._sources(callee, self.flow(callee).get("rets", []), depth + 1)
        deepest = max(deepest, reach)
        out = {s for s in returned if not s.startswith("p:")}
        for source in sorted(s for s in returned if s.startswith("p:")):
            bound = self.argument(key, index, callee, source[2:])
            if bound is not None:
                found, reach = self._sources(key, bound, depth + 1)
                out |= found
                deepest = max(deepest, reach)
        return frozenset(out), deepest

    def argument(self, caller: Key, index: int, callee: Key, param: str) -> list[str] | None:
        """The atoms the caller's site `index` passes for `callee`'s parameter `param`."""
        site = self.sites(caller)[index]
        if param in site.get("kw", {}):
            return list(site["kw"][param])
        params = list((self.functions.get(callee) or {}).get("params") or [])
        # ``obj.method(x)`` / ``self.method(x)`` / ``Cls(x)`` bind ``self`` implicitly
        if params[:1] in (["self"], ["cls"]) and ("." in str(site.get("name")) or
                                                  callee[1].endswith(".__init__")):
            params = params[1:]
        if param in params and params.index(param) < len(site.get("args", [])):
            return list(site["args"][params.index(param)])
        return None


def _enclosing(qual: str) -> list[str]:
    """Scopes a bare name is looked up in: enclosing functions, innermost first, then ""."""
    parts = qual.split(".")
    return [".".join(parts[:cut]) for cut in range(len(parts), 0, -1)] + [""]


def _classes(sources: Iterable[str]) -> list[Target]:
    """The repository classes among `sources` (``o:<path>|<class>``), in a fixed order."""
    out = []
    for source in sorted(sources):
        if source.startswith("o:"):
            path, _, cls = source[2:].partition("|")
            out.append(Target(path, cls, True))
    return out
