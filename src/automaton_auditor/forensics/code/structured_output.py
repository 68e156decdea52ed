"""Structured-output findings: which schema the models are bound to, and retries.

When the graph's wiring is known (`wired_scope`: every node of the main graph resolves to a
function), only code that the graph runs counts: the node functions, what they call or hand
on, and module-level code of the files they import. A schema binding or a retry loop in a
module nothing runs is quoted as unwired and earns nothing. When the wiring is not known, or
the graph reaches no model call although it imports the files that hold them (the call graph
lost the thread), every file counts.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from automaton_auditor.forensics.code.callgraph import CallGraph, Key
from automaton_auditor.forensics.code.common import JSON
from automaton_auditor.forensics.code.facts import call_finding, calls_of
from automaton_auditor.forensics.code.liveness import (
    Scope,
    imported_files,
    live,
    references,
)
from automaton_auditor.forensics.code.node_retry import node_policies, policy_text
from automaton_auditor.forensics.code.source import function_source, line_at
from automaton_auditor.forensics.code.topology import JUDGE, Topology
from automaton_auditor.forensics.code.walk import TRIGGERS
from automaton_auditor.state import Finding

OPINION = re.compile(r"opinion|verdict|judg|outcome|ruling|score", re.I)
MODEL_KINDS = ("structured", "llm_invoke")
MAX_UNWIRED = 8


def wired_scope(facts: dict[str, JSON], graph: CallGraph, main: Topology | None,
                others: list[Topology]) -> Scope | None:
    """What the graph runs (see the module docstring), or None when that is not known."""
    if main is None or not main.nodes or main.computed:
        return None
    roots: list[Key] = []
    for topo in [main, *others]:
        for _name, node in sorted(topo.nodes.items()):
            key = graph.node_function(node)
            if key is None and topo is main:
                return None  # a node built at run time (a factory, a subgraph): unknown
            if key is not None:
                roots += [key, *_makers(graph, node["op"])]
    functions = live(graph, roots, references(facts))
    files = imported_files(graph, {k[0] for k in functions} | {op["path"] for op in main.ops})
    scope = Scope(frozenset(functions), frozenset(files))
    models = [pc for kind in MODEL_KINDS for pc in calls_of(facts, kind)]
    if models and not any(scope.runs(p, str(c["func"])) for p, c in models) and (
            any(p in files for p, _ in models)
            or _imports_unknown(facts, files, {p for p, _ in models})):
        # The graph imports model code yet reaches none of it: the call graph lost the
        # thread. Model code only in files nothing the graph runs imports cannot run.
        return None
    return scope


def _makers(graph: CallGraph, op: JSON) -> list[Key]:
    """The repository functions a node's construction calls (``judges.prosecutor()``,
    ``make_judge(llm, "Prosecutor")`` and the calls in their arguments): they run when the
    graph is built, so what they hand the node (a persona prompt) is live code."""
    found: list[Key] = []
    pending = [op.get("wraps")]
    while pending:
        value = pending.pop()
        if not isinstance(value, dict) or not value.get("call"):
            continue
        maker = graph.named(str(op["path"]), str(value["call"]), op.get("line"))
        if maker is not None:
            found.append(maker)
        pending += [*(value.get("args") or []), *(value.get("kw") or {}).values()]
    return found


def _imports_unknown(facts: dict[str, JSON], files: frozenset[str] | set[str],
                     targets: set[str]) -> bool:
    """Whether what `files` import is not fully known (so they may import one of the
    `targets`): a file whose facts were not read (unparsable; skipped, unless every target's
    module name holds a trigger word, which a skipped file contains nowhere, so it cannot
    import them by name), or one that imports by name at run time (importlib,
    ``__import__``)."""
    named = all(any(t.decode() in PurePosixPath(p).stem for t in TRIGGERS) for p in targets)
    for path in files:
        data = facts.get(path)
        if not data or "error" in data or ("skipped" in data and not named):
            return True
        imports = (data.get("imports") or {}).values()
        reads = {n for names in (data.get("refs") or {}).values() for n in names}
        if any(str(i).split(".")[0] == "importlib" for i in imports) or "__import__" in reads:
            return True
    return False


def _wired(facts: dict[str, JSON], scope: Scope | None) -> tuple[dict[str, JSON],
                                                                list[tuple[str, JSON]]]:
    """The facts of code the graph runs, and the model calls and retries left out."""
    if scope is None:
        return facts, []
    kept: dict[str, JSON] = {}
    dropped: list[tuple[str, JSON]] = []
    for path in sorted(facts):
        calls = facts[path].get("calls") or []
        live = [c for c in calls if scope.runs(path, str(c["func"]))]
        dropped += [(path, c) for c in calls if c not in live and c["kind"] in
                    (*MODEL_KINDS, "retry")]
        functions = {q: i for q, i in (facts[path].get("functions") or {}).items()
                     if scope.runs(path, q)}
        kept[path] = {**facts[path], "calls": live, "functions": functions}
    return kept, dropped


def _unwired_note(dropped: list[tuple[str, JSON]]) -> str:
    if not dropped:
        return ""
    where = ", ".join(f"{p}:{c['line']}" for p, c in dropped[:MAX_UNWIRED])
    return (f" Not counted: {len(dropped)} model call(s) or retries in code the graph never "
            f"runs ({where}{', ...' if len(dropped) > MAX_UNWIRED else ''}).")


def _model_decorators(facts: dict[str, JSON], retries: list[tuple[str, JSON]],
                      model_calls: list[tuple[str, JSON]]) -> tuple[list[tuple[str, JSON]], str]:
    """The retries that retry a model call: a retry decorator counts only on a function from
    which a model call can be reached (``@retry`` on a detective that reads files retries no
    model); the others are named in a note."""
    models = {(p, str(c["func"])) for p, c in model_calls}
    graph = CallGraph(facts) if any(str(c.get("how", "")).startswith("@")
                                    for _p, c in retries) else None
    kept, other = [], []
    for path, call in retries:
        if graph is not None and str(call.get("how", "")).startswith("@") and \
                not models.intersection(graph.reachable([(path, str(call["func"]))])):
            other.append(f"{path}:{call['line']}")
        else:
            kept.append((path, call))
    return kept, (f" Not counted: {len(other)} retry decorator(s) on functions that reach no "
                  f"model call ({', '.join(other[:MAX_UNWIRED])})." if other else "")


def _model_helpers(facts: dict[str, JSON], helpers: list[tuple[str, JSON]],
                   model_calls: list[tuple[str, JSON]]) -> list[tuple[str, JSON]]:
    """The retry-loop helpers that may retry a model call: the loop calls what it is handed
    (``fn()``) or a model call (a provider SDK's reply call too) can be reached from the
    function. One that only does its own work again (removing a directory) retries no
    model."""
    # a client made where it is called (``ChatOpenAI(...).invoke(x)``) counts as its call;
    # so does a provider SDK's own reply call inside a repository's model client class
    models = {(p, str(c["func"])) for p, c in [*model_calls, *calls_of(facts, "llm_ctor"),
                                               *calls_of(facts, "sdk_reply")]}
    graph = CallGraph(facts) if helpers else None
    return [(p, c) for p, c in helpers if graph is not None and (
        ((facts[p].get("functions") or {}).get(c["func"]) or {}).get(
            "try_in_attempt_loop", {}).get("calls_param")
        or models.intersection([(p, str(c["func"])), *graph.reachable([(p, str(c["func"]))])]))]


def _judge_block(facts: dict[str, JSON], calls: list[tuple[str, JSON]],
                 repo: Path | None, finding: Finding) -> Finding:
    """Quote the whole function that queries the judge model (the rubric asks for it)."""
    if not calls or repo is None:
        return finding
    path, call = calls[0]
    info = (facts[path].get("functions") or {}).get(call["func"])
    if not info:
        return finding
    return finding.model_copy(update={
        "content": function_source(repo, path, info["line"], info["end"]),
        "location": f"{path}:{info['line']}"})


def library_bindings(facts: dict[str, JSON],
                      structured: list[tuple[str, JSON]]) -> list[tuple[str, JSON]]:
    """The schema bindings that reach a model library: in a repository that builds no chat
    model, a call of a ``with_structured_output`` or ``bind_tools`` it defines itself, with no
    binding inside it (a stand-in that returns itself), binds nothing. Where a model is built,
    such a class is an offline fallback beside it and the calls are kept."""
    if calls_of(facts, "llm_ctor"):
        return structured
    inside = {c["func"] for _p, c in structured}
    stand_ins = {qual.rsplit(".", 1)[-1] for path in facts
                 for qual in (facts[path].get("functions") or {})
                 if "." in qual and qual.rsplit(".", 1)[-1] in ("with_structured_output",
                                                                 "bind_tools")
                 and qual not in inside}
    return [(p, c) for p, c in structured if c.get("how") not in stand_ins]


def llm_findings(facts: dict[str, JSON], repo: Path | None = None,
                 scope: Scope | None = None, judges: Scope | None = None,
                 main: Topology | None = None,
                 parses: list[tuple[str, JSON]] | None = None) -> list[Finding]:
    """``llm.structured_output``, ``opinion_schema``, ``retry``, ``freeform_parse``,
    ``schema_parse`` from the code the graph runs (`scope`); `judges`: what the judge nodes
    run; `main`: the graph (RetryPolicy); `parses`: json.loads in helpers (`helper_parse`)."""
    policies = node_policies(facts, repo, main)
    facts, dropped = _wired(facts, scope)
    note = _unwired_note(dropped)
    unwired = [f"{p}:{c['line']}" for p, c in dropped[:50]]
    structured = library_bindings(facts, calls_of(facts, "structured"))
    opinion = [(p, c) for p, c in structured
               if any(OPINION.search(s) for s in c["schemas"])]
    invokes = calls_of(facts, "llm_invoke")
    retry_loops = [(p, c) for p, c in invokes if c["in_try"] and c["in_attempt_loop"]]
    model_calls = invokes + structured
    retry_funcs = [(p, c) for p, c in model_calls
                   if ((facts[p].get("functions") or {}).get(c["func"]) or {}).get("retry_hint")
                   and c.get("in_try", True)]
    helpers = [(p, {"line": info["try_in_attempt_loop"]["line"], "func": q,
                    "snippet": info["try_in_attempt_loop"]["snippet"], "how": f"retry loop in {q}"})
               for p in sorted(facts) for q, info in sorted((facts[p].get("functions") or
                                                              {}).items())
               if info.get("try_in_attempt_loop") and info.get("retry_hint")]
    helpers = _model_helpers(facts, helpers, model_calls)
    seen = {(p, c["func"]) for p, c in retry_funcs + retry_loops}
    loops = retry_loops + [
        (p, {**c, "how": f"retry counter in {c['func']}"}) for p, c in retry_funcs] + [
        (p, c) for p, c in helpers if (p, c["func"]) not in seen]
    tool_only = _tool_bound_functions(structured)
    only = [(p, c, rate_limit_only(facts, p, c) or reply_unread(facts, p, c, tool_only))
            for p, c in loops]
    selective = {(p, t["line"]): (p, t) for p, _c, t in only if t is not None}
    decorated, unmodelled = _model_decorators(facts, calls_of(facts, "retry"), model_calls)
    retries = decorated + [(p, c) for p, c, t in only if t is None] + [
        (p["path"], {**p, "how": f"RetryPolicy on node {p['node']} (retry_on={p['retry_on']})"})
        for p in policies if p["malformed"]]
    freeform = calls_of(facts, "freeform_parse") + (parses or [])  # `helper_parse`
    schemas = sorted({s for _p, c in structured for s in c["schemas"]})
    return [
        call_finding("llm.structured_output", "LLM calls are bound to a schema "
           "(with_structured_output / bind_tools)", bool(structured), "success", structured,
           f"{len(structured)} binding(s) to: {', '.join(schemas) or 'nothing'}." + note,
           schemas=schemas, unwired=unwired),
        _judge_block(facts, opinion, repo, call_finding(
            "llm.opinion_schema", "Judges are bound to a JudicialOpinion-like schema",
            bool(opinion), "success", opinion or structured,
           "A model is bound to an opinion schema." if opinion else
            "No binding to a schema named like an opinion or verdict.", confidence=0.8)),
        _retry_finding(retries, sorted(selective.values(), key=lambda pt: (pt[0],
                                                                             pt[1]["line"])),
                       repo, note + unmodelled, unwired,
                       [p for p in policies if not p["malformed"]]),
        freeform_finding(freeform, judges),
        schema_parse_finding(calls_of(facts, "schema_parse"), bool(structured), note),
    ]


def judge_scope(facts: dict[str, JSON], graph: CallGraph, main: Topology | None,
                wired: Scope | None = None) -> Scope | None:
    """What the main graph's judge nodes run (and what they call or hand on); else the code
    `wired` runs that reaches a model bound to the opinion schema; else None."""
    roots: list[Key] = []
    for name, node in sorted((main.nodes if main else {}).items()):
        key = graph.node_function(node) if JUDGE.search(name) else None
        if key is not None:
            roots.append(key)
        elif JUDGE.search(name) and "." in str(node.get("fn") or ""):
            # a node a factory made at import (``prosecutor = make_judge(...)``): its module's
            module = str(node["fn"]).rsplit(".", 1)[0]
            files = graph.module_files(module, str(node["op"]["path"]))
            roots += sorted(k for k in graph.functions if k[0] in files)
    # not the module-level code of their files: the graph built there names every node
    refs = {key: names for key, names in references(facts).items() if key[1]}
    roots = roots or _opinion_code(facts, graph, wired, refs)
    return Scope(frozenset(live(graph, roots, refs)), frozenset()) if roots else None


def _opinion_code(facts: dict[str, JSON], graph: CallGraph, wired: Scope | None,
                  refs: dict[Key, set[str]]) -> list[Key]:
    """Code the graph runs that reaches a model bound to the opinion schema (tedoaba)."""
    bound = {(p, str(c["func"])) for p, c in calls_of(facts, "structured")
             if any(OPINION.search(str(s)) for s in c.get("schemas") or [])}
    return sorted(k for k in graph.functions if k[0] in {p for p, _f in bound} and k[1]
                  and (wired is None or wired.runs(*k)) and bound & live(graph, [k], refs))


def freeform_finding(parses: list[tuple[str, JSON]], judges: Scope | None) -> Finding:
    """``llm.freeform_parse``: ``json.loads`` on a model message's content. The rubric's
    failure is the judges' opinions read from free text: when the judges' code is known,
    only a parse it runs is charged; one elsewhere (a detective's helper) is only noted."""
    charged = [(p, c) for p, c in parses if judges is None or judges.runs(p, str(c["func"]))]
    outside = [f"{p}:{c['line']}" for p, c in parses if (p, c) not in charged]
    where = " in the judges' code" if judges is not None else ""
    text = (f"{len(charged)} json.loads call(s) on a message's content{where}." if charged
            else f"No json.loads on model message content{where}.")
    if outside:
        text += (f" Not charged: {len(outside)} outside the judges ({', '.join(outside[:5])}),"
                 " whose output is no opinion.")
    return call_finding("llm.freeform_parse",
                        "Model output parsed as free text (json.loads on .content)",
                        bool(charged), "failure", charged or [
                            (p, c) for p, c in parses if (p, c) not in charged],
                        text, confidence=0.7, outside=outside[:20])


def schema_parse_finding(parses: list[tuple[str, JSON]], bound: bool, note: str) -> Finding:
    """``llm.schema_parse``: a reply validated by a schema output parser (`parsers`) is
    partial enforcement, credited only while no call is bound to a schema (a bound call is
    validated already). Its absence charges nothing: the binding facts say what is missing."""
    schemas = sorted({str(c["schema"]) for _p, c in parses})
    credited = bool(parses) and not bound
    return call_finding(
        "llm.schema_parse", "Model replies validated by a schema output parser "
        "(PydanticOutputParser or a prompt | model | parser chain)", bool(parses),
        "success" if credited else "neutral", parses,
        (f"{len(parses)} reply parse(s) validated against: {', '.join(schemas)}"
         + ("; no call is bound to a schema, so the parser is the only enforcement."
            if credited else "; a bound call already validates." if parses else ".")
         if parses else "No schema output parser applied to a reply.") + note,
        confidence=0.8, schemas=schemas)


def rate_limit_only(facts: dict[str, JSON], path: str, call: JSON) -> JSON | None:
    """The innermost try of an attempt loop around `call` (`retries.retried`), when it goes
    round again only for errors a test on the error selects, none of them a malformed
    reply: such a loop does not retry malformed output."""
    inner = _innermost_try(_attempt_tries(facts, path, call), call)
    if inner is None or inner["retries"] != "selected" or inner["malformed"]:
        return None
    return inner


def _attempt_tries(facts: dict[str, JSON], path: str, call: JSON) -> list[JSON]:
    """The tries of attempt loops in the call's function (`retries.retried`)."""
    info = (facts[path].get("functions") or {}).get(call["func"]) or {}
    return list(info.get("attempt_tries") or [])


def _innermost_try(tries: list[JSON], call: JSON) -> JSON | None:
    around = [t for t in tries if t["line"] <= call["line"] <= t["end"]]
    return max(around, key=lambda t: t["line"], default=None)


def _tool_bound_functions(structured: list[tuple[str, JSON]]) -> set[tuple[str, str]]:
    """Functions whose every schema binding is ``bind_tools``: a reply without a tool call
    raises nothing there."""
    kinds: dict[tuple[str, str], set[str]] = {}
    for path, call in structured:
        kinds.setdefault((path, call.get("func") or ""), set()).add(call["how"])
    return {key for key, hows in kinds.items() if hows == {"bind_tools"}}


def reply_unread(facts: dict[str, JSON], path: str, call: JSON,
                 tool_only: set[tuple[str, str]]) -> JSON | None:
    """The innermost try of an attempt loop around `call`, when the call's function binds
    its model with ``bind_tools`` only and the try leaves the loop on any reply
    (`retries.leaves_on_reply`): a malformed reply, one without a tool call, is never tried
    again."""
    if (path, call["func"]) not in tool_only:
        return None
    tries = _attempt_tries(facts, path, call)
    inner = _innermost_try(tries, call)
    # the binding itself sits before the loop: then every attempt of the function counts
    chosen = [inner] if inner is not None else tries
    if not chosen or not all(t.get("leaves") for t in chosen):
        return None
    return {**chosen[-1], "tests": [], "exit": chosen[-1]["leaves"], "reply": True}


def _retry_finding(retries: list[tuple[str, JSON]], selective: list[tuple[str, JSON]],
                   repo: Path | None, note: str, unwired: list[str],
                   policies: list[JSON]) -> Finding:
    """``llm.retry``: the retries of a failed or malformed reply; a loop that retries only
    errors its test selects (rate limits) is quoted, with the line where the rest leave;
    `policies` are nodes' RetryPolicies that retry no malformed reply, said and quoted."""
    if retries or not selective:
        hows = sorted({str(c.get("how", "try/except in a loop")) for _p, c in retries})
        quoted = retries or [(p["path"], p) for p in policies]
        return call_finding(
            "llm.retry", "Retry logic around model calls", bool(retries), "success",
            sorted(quoted, key=lambda pc: (pc[0], pc[1]["line"])),
            (f"{len(retries)} retry mechanism(s): {', '.join(hows)}." if retries else
             "No with_retry, max_retries, retry decorator or retry loop around a model "
             "call.") + policy_text(policies) + note, confidence=0.75, unwired=unwired)
    path, first = selective[0]
    lines = sorted({first["line"], *first["tests"], *([first["exit"]] if first["exit"] else [])})
    quoted = [(path, {"line": n, "snippet": line_at(repo, path, n).split(": ", 1)[-1]})
              for n in lines]
    words = ", ".join(repr(w) for w in first["words"]) or "its type"
    text = (f"The retry loop at {path}:{first['line']} goes round again only when the model "
            "call raises; the model is bound with bind_tools, so a reply with no tool call "
            f"raises nothing, and the loop leaves on any reply at line {first['exit']}: a "
            "malformed reply is never tried again." if first.get("reply") else
            f"The retry loop at {path}:{first['line']} goes round again only for errors its "
            f"test on the error selects ({words}); any other failure, a malformed reply "
            "included, leaves the loop" + (f" at line {first['exit']}" if first["exit"]
                                           else "") + " and is never tried again.")
    return call_finding(
        "llm.retry", "Retry logic around model calls", False, "success", quoted,
        text + note, confidence=0.75, unwired=unwired,
        selective=[f"{p}:{t['line']}" for p, t in selective])
