"""The prompt each judge persona's model call receives, and how much of it is the persona's.

Entry points, one persona each: a function or class named for a persona (its methods run
with ``self`` bound, so a subclass's attributes fill its base's template), a call that
passes a persona's name (``judge_node(state, "Prosecutor", ...)``,
``_make_judge_node("Defense")``), and a function whose parameter indexes a dict keyed by
persona (``PERSONA_CONFIG[persona]``), read once per key; and a call to a node factory whose
result is a persona's judge (``return self._get_judge_node("The critical lens...", ...)`` in
``def prosecutor``), its text counted only in the model calls, of the node the factory makes,
that receive it. `prompt_eval` follows each entry through the repository's functions and
records what the model is handed; the longest such text is that persona's prompt.

Each piece of a prompt carries the line it comes from, so the comparison is by origin: a piece
every persona's prompt holds from the same line is shared template; the rest is the
persona's own text, except a persona's bare name (``ROLE: {persona_name}``), which gives a
judge no philosophy. A field a persona defines but the template never reads is not in the
prompt and counts for nothing.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from automaton_auditor.forensics.code.blocked import Undefined, blocked_at
from automaton_auditor.forensics.code.common import dotted, split_loc
from automaton_auditor.forensics.code.liveness import Scope
from automaton_auditor.forensics.code.prompt_eval import Evaluator
from automaton_auditor.forensics.code.prompt_lines import (
    NAME_WORDS,
    PERSONAS,
    WORD,
    is_persona_name,
    norm,
    persona_named,
    template,
    units,
)
from automaton_auditor.forensics.code.prompt_values import Fn, Frame, Inst, Program, Step, Txt
from automaton_auditor.forensics.code.sent_personas import sent_entries

MAX_ENTRIES = 60
TOTAL_STEPS = 600_000  # expression nodes read for all entries together (a bound on time)


@dataclass(frozen=True)
class Prompt:
    """One persona's prompt: its pieces, the model call that receives it, the entry."""

    persona: str
    text: Txt
    call: str  # path:line of the model call
    entry: str  # what was read to reach it
    # path:line of names never bound before every model call of its judges (none: one runs)
    blocked: tuple[str, ...] = ()
    sites: tuple[tuple[str, tuple[Step, ...]], ...] = ()  # each model call, and its route

    def words(self) -> int:
        """Words of known text."""
        return len(WORD.findall(self.text.text()))


def _entries(program: Program, path: str,
             scope: Scope | None = None) -> list[tuple[str, str, Any]]:
    """(persona, description, how to run) for one file's entry points; with a `scope`, only
    those in functions, classes or module-level code the graph runs."""
    mod = program.module(path)
    if mod is None:
        return []
    found: list[tuple[str, str, Any]] = []
    # a judge nothing in the graph runs prompts no model
    names = {name: node for name, node in mod.names.items()
             if scope is None or scope.runs(path, name if isinstance(
                 node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) else "")
             or _inherits_running(program, scope, path, node)}
    for name, node in names.items():
        persona = persona_named(name)
        if persona and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.append((persona, f"{path}:{node.lineno} {name}", ("fn", Fn(path, node), {})))
        elif persona and isinstance(node, ast.ClassDef):
            found.append((persona, f"{path}:{node.lineno} class {name}",
                          ("cls", f"{path}::{name}", {})))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found += _keyed(program, path, node)
    # module-level statements run on import: a call there that names a persona is an entry
    tops = [*(n for n in names.values() if isinstance(n, ast.AST)),
            *(mod.exprs if scope is None or scope.runs(path, "") else ())]
    for top in tops:
        for call in (n for n in ast.walk(top) if isinstance(n, ast.Call)):
            found += _named_call(program, path, call)
    return found + _factories(program, path, scope) + sent_entries(program, path, scope)


def _inherits_running(program: Program, scope: Scope, path: str, node: ast.AST) -> bool:
    """A class with no methods of its own (``prompt_file = "prosecutor.txt"`` only) runs its
    bases' code when theirs runs and a file the graph runs names it (``ProsecutorNode()``)."""
    if not isinstance(node, ast.ClassDef) or any(
            isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef) for s in node.body):
        return False
    return any(isinstance(n, ast.Name) and n.id == node.name for f in sorted(scope.files)
               if (m := program.module(f)) is not None
               for top in [*m.names.values(), *m.exprs] for n in ast.walk(top)) and any(
        scope.runs(where, cls.name) for where, cls in program.classes(f"{path}::{node.name}")[1:])


def _keyed(program: Program, path: str,
           node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[str, str, Any]]:
    """A function whose parameter indexes a dict keyed by persona: one run per key."""
    params = {a.arg for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]}
    evaluator = Evaluator(program)
    for sub in ast.walk(node):
        index = sub.slice if isinstance(sub, ast.Subscript) else (
            sub.args[0] if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute)
            and sub.func.attr == "get" and sub.args else None)
        base = sub.value if isinstance(sub, ast.Subscript) else (
            sub.func.value if isinstance(sub, ast.Call) and
            isinstance(sub.func, ast.Attribute) else None)
        if not (isinstance(index, ast.Name) and index.id in params and base is not None):
            continue
        table = evaluator.expr(base, {}, Frame(path))
        keys = [k for k in table if persona_named(k)] if isinstance(table, dict) else []
        if len({persona_named(k) for k in keys}) >= 2:
            line = getattr(sub, "lineno", node.lineno)
            return [(str(persona_named(k)), f"{path}:{line} {node.name}[{k!r}]",
                     ("fn", Fn(path, node), {index.id: Txt(((k, f"{path}:{line}"),))}))
                    for k in keys]
    return []


def _named_call(program: Program, path: str, call: ast.Call) -> list[tuple[str, str, Any]]:
    """A call to a repository function that passes one persona's name as an argument."""
    values = [*call.args, *(k.value for k in call.keywords)]
    names = [v.value for v in values if isinstance(v, ast.Constant) and
             isinstance(v.value, str) and len(v.value.split()) <= NAME_WORDS]
    personas = {persona_named(n) for n in names} - {None}
    if len(personas) != 1 or not isinstance(call.func, ast.Name):
        return []
    target = Evaluator(program).const(path, call.func.id)
    if not isinstance(target, Fn):
        return []
    return [(str(next(iter(personas))), f"{path}:{call.lineno} {call.func.id}(...)",
             ("call", target, call))]


def _own(node: ast.AST) -> list[ast.AST]:
    """The nodes of a function's own code: nested functions, lambdas and classes are listed
    but not entered (their returns are not its returns)."""
    out: list[ast.AST] = []
    todo = list(ast.iter_child_nodes(node))
    while todo:
        sub = todo.pop()
        out.append(sub)
        if not isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda |
                          ast.ClassDef):
            todo += ast.iter_child_nodes(sub)
    return out


def _returns_closure(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A node factory: the function returns a function it defines (whose body `prompt_eval`
    reads in place, with the factory's parameters bound)."""
    own = _own(node)
    inner = {s.name for s in own if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)}
    return any(isinstance(s, ast.Return) and isinstance(s.value, ast.Name) and
               s.value.id in inner for s in own)


def _registered(node: ast.AST, name: str) -> list[tuple[ast.Call, str]]:
    """The calls in one function (or module-level value) `name` whose result a persona's
    judge is: registered as a graph node named for a persona, assigned to a variable,
    attribute or key named for one, or returned by a function named for one."""
    found: list[tuple[ast.Call, str | None]] = []
    if isinstance(node, ast.Call):  # a module-level value: ``prosecutor = make_judge(...)``
        found.append((node, persona_named(name)))
    for sub in [node, *_own(node)]:
        if isinstance(sub, ast.Return) and isinstance(sub.value, ast.Call):
            found.append((sub.value, persona_named(name)))
        elif isinstance(sub, ast.Assign) and isinstance(sub.value, ast.Call):
            found += [(sub.value, persona_named(t.id if isinstance(t, ast.Name) else t.attr))
                      for t in sub.targets if isinstance(t, ast.Name | ast.Attribute)]
        elif isinstance(sub, ast.Dict):
            found += [(v, persona_named(k.value)) for k, v in zip(sub.keys, sub.values,
                                                                   strict=True)
                      if isinstance(k, ast.Constant) and isinstance(k.value, str) and
                      isinstance(v, ast.Call)]
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and \
                sub.func.attr == "add_node" and len(sub.args) == 2 and \
                isinstance(sub.args[0], ast.Constant) and isinstance(sub.args[1], ast.Call):
            found.append((sub.args[1], persona_named(str(sub.args[0].value))))
    return [(call, persona) for call, persona in found if persona]


def _factories(program: Program, path: str,
               scope: Scope | None) -> list[tuple[str, str, Any]]:
    """Node factories handed a persona's prompt: a call whose result is a persona's judge
    (`_registered`) to a repository function or method that returns a function it defines.
    Its string arguments are that persona's prompt only where the node the factory makes
    hands them to a model (`_run` keeps only those model calls)."""
    mod = program.module(path)
    if mod is None:
        return []
    sites: list[tuple[str, str, ast.AST]] = [("", "", e) for e in mod.exprs]
    for name, node in mod.names.items():
        if isinstance(node, ast.ClassDef):
            sites += [(f"{node.name}.{m.name}", f"{path}::{node.name}", m) for m in node.body
                      if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef)]
        else:  # a function, or a module-level value (``prosecutor = make_judge(...)``)
            sites.append((name if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                          else "", "", node))
    evaluator = Evaluator(program)
    found: list[tuple[str, str, Any]] = []
    for qual, cls, node in sites:
        if scope is not None and not scope.runs(path, qual):
            continue  # a judge nothing in the graph makes
        name = qual.rsplit(".", 1)[-1] or next((k for k, v in mod.names.items() if v is node),
                                               "")
        for call, persona in _registered(node, name):
            named = {persona_named(a.value) for a in call.args if isinstance(a, ast.Constant)
                     and isinstance(a.value, str) and len(a.value.split()) <= NAME_WORDS}
            if named - {None, persona}:
                continue  # the call names another persona: which judge it makes is unclear
            func = call.func
            target = (evaluator.attribute(Inst(cls), func.attr) if cls and
                      isinstance(func, ast.Attribute) and dotted(func.value) == "self" else
                      evaluator.expr(func, {}, Frame(path)))
            if isinstance(target, Fn) and _returns_closure(target.node):
                found.append((persona, f"{path}:{call.lineno} {dotted(func)}(...)",
                              ("factory", target, (call, cls if target.owner else ""))))
    return found


def _run(program: Program, path: str,
         how: tuple[str, Any, Any]) -> tuple[list[tuple[Txt, str, tuple[Step, ...]]], int]:
    """Run one entry point: every text a model was handed on the way, with the model call
    and the route to it, and the work done."""
    evaluator = Evaluator(program)
    kind, target, extra = how
    frame = Frame(path)
    given: set[tuple[str, str]] = set()
    if kind == "fn":
        evaluator.call(target, [], {}, frame, env=extra)
    elif kind == "factory":
        call, cls = extra
        inst = evaluator.instance(cls, [], {}, frame) if cls else None
        frame = Frame(path, inst, cls)
        args = [evaluator.expr(a, {}, frame) for a in call.args]
        kwargs = {k.arg: evaluator.expr(k.value, {}, frame) for k in call.keywords if k.arg}
        # the text handed to the factory, beyond a persona's name: its prompt, if it
        # reaches a model
        given = {part for v in [*args, *kwargs.values()] if isinstance(v, Txt) and
                 len(WORD.findall(v.text())) > NAME_WORDS for part in v.parts}
        evaluator.call(target, args, kwargs, frame, inst)
    elif kind == "call":
        args = [evaluator.expr(a, {}, frame) for a in extra.args]
        kwargs = {k.arg: evaluator.expr(k.value, {}, frame) for k in extra.keywords if k.arg}
        evaluator.call(target, args, kwargs, frame)
    else:
        inst = evaluator.instance(target, [], {}, frame)
        seen: set[str] = set()
        for where, cls in program.classes(target):
            for stmt in cls.body:
                if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and \
                        stmt.name not in seen and stmt.name != "__init__":
                    seen.add(stmt.name)
                    evaluator.call(Fn(where, stmt, f"{where}::{cls.name}"), [], {}, frame, inst)
    inputs = [(text, call, route) for (text, call), route
              in zip(evaluator.inputs, evaluator.routes, strict=True)
              if kind != "factory" or not text.parts or given & set(text.parts)]
    return inputs, evaluator.steps


def judge_prompts(repo: Path, paths: list[str], entry_paths: list[str],
                  scope: Scope | None = None, undefined: Undefined | None = None,
                  models: frozenset[str] = frozenset()) -> dict[str, Prompt]:
    """Per persona, the longest text its judge's model calls receive (personas whose calls
    could not be followed are left out); with a `scope`, from the entries the graph runs;
    with `undefined` (`blocked.undefined_reads`), the names that stop every model call of a
    persona's judges before it is made. A call handed no known text is a model call when
    it is on a line of `models` (the call facts' ``llm_invoke``, what the ``llm.*`` facts
    count): it is one of the persona's `sites`, and a persona with no other gets a prompt
    of no text (`with_text` leaves it out)."""
    program = Program(repo, paths)
    best: dict[str, Prompt] = {}
    reached: set[str] = set()
    stopped: dict[str, set[str]] = {}
    sites: dict[str, dict[tuple[Any, ...], tuple[str, tuple[Step, ...]]]] = {}
    entries = [(p, e) for p in sorted(entry_paths) for e in _entries(program, p, scope)]
    spent = 0
    for path, (persona, entry, how) in entries[:MAX_ENTRIES]:
        if spent > TOTAL_STEPS:
            break
        inputs, steps = _run(program, path, how)
        spent += steps
        for text, call, route in inputs:
            if not text.parts:  # no text known: a model call only by the call facts
                if call in models:
                    sites.setdefault(persona, {}).setdefault(_route_key(call, route),
                                                             (call, route))
                    best.setdefault(persona, Prompt(persona, text, call, entry))
                continue
            where = blocked_at(route, undefined or {})
            if where is None:
                reached.add(persona)
            else:
                stopped.setdefault(persona, set()).add(where)
            sites.setdefault(persona, {}).setdefault(_route_key(call, route), (call, route))
            prompt = Prompt(persona, text, call, entry)
            if prompt.words() > (best[persona].words() if persona in best else 0):
                best[persona] = prompt
    return {p: replace(best[p], blocked=() if p in reached else tuple(
                sorted(stopped.get(p, set()), key=split_loc)),
                       sites=tuple(sorted(sites.get(p, {}).values(),
                                          key=lambda s: split_loc(s[0]))))
            for p in PERSONAS if p in best}


def with_text(prompts: dict[str, Prompt]) -> dict[str, Prompt]:
    """The prompts whose text is known (`judge_prompts` also gives those of personas whose
    model calls were followed but handed no text it could read)."""
    return {p: prompt for p, prompt in prompts.items() if prompt.text.parts}


def _route_key(call: str, route: tuple[Step, ...]) -> tuple[Any, ...]:
    """One model call reached one way: the call and the lines of the route's steps."""
    return (call, *((s.path, getattr(s.fn, "lineno", 0), getattr(s.call, "lineno", 0))
                    for s in route))


def own_text(prompts: dict[str, Prompt]) -> dict[str, dict[str, Any]]:
    """Per persona: words of its own text, words of shared template, words that only name
    the persona, the text written for it and the lines its own text comes from. Shared
    template is a piece every persona's prompt holds from the same line, and a line or
    sentence (`prompt_lines`) two or more personas' prompts hold, wherever each copy is
    written (a scoring guide repeated in each persona's constant). ``own_text`` keeps the
    repeated lines: they are the text the personas' prompts have in common (collusion)."""
    keys = {p: set(prompt.text.parts) for p, prompt in prompts.items()}
    split = {p: units(prompt.text.parts) for p, prompt in prompts.items()}
    common = template({p: {norm(u) for u in us} for p, us in split.items()})
    out: dict[str, dict[str, Any]] = {}
    for persona, prompt in prompts.items():
        own = shared = named = 0
        lines: list[str] = []
        texts: list[str] = []
        for unit in split[persona]:
            repeated = norm(unit) in common
            for piece, index in unit:
                part, words = prompt.text.parts[index], len(WORD.findall(piece))
                if all(part in other for p, other in keys.items() if p != persona):
                    shared += words
                elif is_persona_name(part[0]):
                    named += words
                else:
                    texts.append(piece)
                    shared += words if repeated else 0
                    own += 0 if repeated else words
                    if words and not repeated and part[1] not in lines:
                        lines.append(part[1])
        total = own + shared + named
        out[persona] = {"own_words": own, "shared_words": shared, "name_words": named,
                        "own_share": round(own / total, 3) if total else 0.0,
                        "own_lines": lines, "own_text": "".join(texts), "call": prompt.call,
                        "entry": prompt.entry}
    return out


def persona_messages(prompt: Prompt, other: Prompt) -> Prompt:
    """`prompt` cut to its persona's prompt as the rubric compares them ("distinct,
    conflicting system prompts"): the messages that carry text of the persona's own (a
    piece `other` does not receive from the same line, beyond the persona's name), and of
    those the system messages when one of them does. A message both receive whole from the
    same lines (the shared task, evidence and answer format) is no persona's prompt; a
    message holding persona text keeps its template (a persona slotted into a shared system
    prompt shares that prompt)."""
    theirs = set(other.text.parts)
    messages = prompt.text.messages()
    kept = [(role, m) for role, m in messages if any(
        p not in theirs and WORD.search(p[0]) and not is_persona_name(p[0]) for p in m)]
    if any(role == "system" for role, _m in kept):
        kept = [(role, m) for role, m in kept if role == "system"]
    if not kept or len(kept) == len(messages):
        return prompt
    return replace(prompt, text=Txt(tuple(p for _role, m in kept for p in m)))


def shared_share(first: Prompt, second: Prompt) -> float:
    """The share of two persona prompts' words that both hold, as the rubric compares the
    prompts: template pieces both receive from the same lines, and lines or sentences both
    hold wherever each copy is written, over the messages that carry persona text
    (`persona_messages`); read by `own_text` for the pair alone, so it agrees with the
    own-words count. Two prompts with no text of their own are the same prompt under two
    names."""
    pair = own_text({"a": persona_messages(first, second), "b": persona_messages(second, first)})
    if not any(c["own_words"] for c in pair.values()):
        return 1.0
    shared = sum(int(c["shared_words"]) for c in pair.values())
    total = sum(int(c["own_words"]) + int(c["shared_words"]) + int(c["name_words"])
                for c in pair.values())
    return round(shared / total, 3) if total else 0.0
