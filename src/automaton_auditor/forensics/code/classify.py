"""Classifying one call node into the facts the findings need: an ordered registry of rules.

Each rule is one predicate and one recorder (as a linter registers one check per plugin).
`EXCLUSIVE` rules are tried in order and the first that applies records its fact; `ALWAYS`
rules record beside it. Rules see the call through `Site` and write only through the
`CallRecorder` protocol, never into the walk's own structures.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from itertools import pairwise
from typing import NamedTuple

from automaton_auditor.forensics.code.common import dotted, keyword, resolve, str_value, unparse
from automaton_auditor.forensics.code.recorder import CallRecorder, Ctx
from automaton_auditor.forensics.code.replies import (
    LLM_METHODS,
    LLM_PACKAGES,
    LLM_RECEIVER,
    SDK_CHAT,
    SDK_REPLIES,
    content_args,
    from_content,
)

SUBPROCESS = {"run", "call", "check_call", "check_output", "Popen", "getoutput",
              "getstatusoutput"}
HISTORY_COMMANDS = {"log", "rev-list", "shortlog"}  # git commands that read the history


class Site(NamedTuple):
    """One call as the rules see it: the node, where it sits, and its names."""

    node: ast.Call
    ctx: Ctx
    name: str  # as written (``sp.run``)
    full: str  # through the imports (``subprocess.run``)
    tail: str  # last part of `full` (``run``)
    attr: str  # the method name when the callee is an attribute, else ""


Predicate = Callable[[CallRecorder, Site], bool]
Record = Callable[[CallRecorder, Site], None]


class Rule(NamedTuple):
    """One classification rule: when it applies, and what it records."""

    name: str
    applies: Predicate
    record: Record


def classify_call(col: CallRecorder, node: ast.Call, ctx: Ctx, name: str, full: str,
                  tail: str, attr: str) -> None:
    """Record the fact(s) a call establishes, if any."""
    site = Site(node, ctx, name, full, tail, attr)
    for rule in EXCLUSIVE:
        if rule.applies(col, site):
            rule.record(col, site)
            break
    for rule in ALWAYS:
        if rule.applies(col, site):
            rule.record(col, site)


def _timeout(s: Site) -> bool:
    return keyword(s.node, "timeout") is not None


def _git_timeout(s: Site, own: str) -> bool:
    """A clone bounded in time: the call's own time limit (`own`: ``timeout=`` of a process
    call, ``kill_after_timeout=`` of GitPython, which hands any other keyword, ``timeout=``
    too, to git as an option), or git's low-speed abort set in its ``env``."""
    env = keyword(s.node, "env")
    return keyword(s.node, own) is not None or (env is not None and any(
        (str_value(n) or "").startswith("GIT_HTTP_LOW_SPEED") for n in ast.walk(env)))


# --- processes --------------------------------------------------------------------------
def _is_os_process(_col: CallRecorder, s: Site) -> bool:
    return s.full in ("os.system", "os.popen") or s.full.startswith(("os.spawn", "os.exec"))


def _record_os_process(col: CallRecorder, s: Site) -> None:
    _process(col, s, via_shell=True)


def _is_subprocess(_col: CallRecorder, s: Site) -> bool:
    return s.full.startswith("subprocess.") and s.tail in SUBPROCESS


def _record_subprocess(col: CallRecorder, s: Site) -> None:
    _process(col, s, via_shell=col.shell(s.node) or s.tail in ("getoutput", "getstatusoutput"))


def _is_async_process(_col: CallRecorder, s: Site) -> bool:
    return s.full in ("asyncio.create_subprocess_exec", "asyncio.create_subprocess_shell")


def _record_async_process(col: CallRecorder, s: Site) -> None:
    if s.tail == "create_subprocess_shell":
        _process(col, s, via_shell=True)
        return
    # ``create_subprocess_exec("git", "clone", url, dest)`` takes the command as its
    # arguments (``*cmd``: looked through one local assignment, as a process call's list)
    given = [a.value if isinstance(a, ast.Starred) else a for a in s.node.args]
    parts = [(col.bound(a.id, s.ctx) or a) if isinstance(a, ast.Name) else a for a in given]
    elts = [e for p in parts for e in (p.elts if isinstance(p, ast.List | ast.Tuple) else [p])]
    _process(col, s, via_shell=False, command=ast.List(elts=elts, ctx=ast.Load()))


def _process(col: CallRecorder, s: Site, via_shell: bool,
             command: ast.expr | None = None) -> None:
    node, ctx = s.node, s.ctx
    arg = command if command is not None else col.first_arg(node, ctx)
    literal = col.literal(arg, ctx)
    # every literal piece of the command, also inside "git clone " + url and f-strings
    text = " ".join(n.value for n in (ast.walk(arg) if arg is not None else [])
                    if isinstance(n, ast.Constant) and isinstance(n.value, str))
    is_clone = ("clone" in text.split() or "clone" in text) and "git" in text
    words = set(text.split())  # "git" anywhere in it, the history command in order
    col.add("process", node, ctx, name=s.full, shell=via_shell, literal=literal,
            timeout=_timeout(s),
            capture=any(keyword(node, k) is not None for k in
                        ("capture_output", "stdout", "stderr")),
            in_try=ctx.in_try, tempdir=ctx.tempdir, clone=is_clone,
            history=_history_line(arg) if "git" in words else 0)
    if is_clone:
        col.add("clone", node, ctx, how=s.full, tempdir=ctx.tempdir, in_try=ctx.in_try,
                timeout=_git_timeout(s, "timeout"), shell=via_shell, literal=literal,
                **_depth(arg, params=col.int_defaults(ctx.func)))


def _words(command: ast.expr | None) -> list[tuple[str, int]]:
    """The words of a command's literal pieces, in order, each with its line."""
    pieces = command.elts if isinstance(command, ast.List | ast.Tuple) else [command]
    return [(w, c.lineno) for p in pieces
            for c in (p.values if isinstance(p, ast.JoinedStr) else [p])
            if isinstance(c, ast.Constant) for w in str(c.value).split()]


def _history_line(command: ast.expr | None) -> int:
    """The line of the git command word that reads the history (``log``), else 0."""
    return next((line for w, line in _words(command) if w in HISTORY_COMMANDS), 0)


def _depth(command: ast.expr | None, value: ast.expr | None = None,
           params: dict[str, int] | None = None) -> dict[str, object]:
    """``{"depth": N, "depth_line": L}`` for a shallow clone: ``--depth N`` or
    ``--depth=N`` among the literal pieces of its command (or GitPython's ``depth=N``:
    `value`), else empty. ``"--depth", str(depth)`` with `depth` a parameter of the
    enclosing function whose default is an int (`params`) takes that default, naming the
    parameter (``depth_param``) so a caller passing another value can be told apart."""
    if isinstance(value, ast.Constant) and isinstance(value.value, int):
        return {"depth": value.value, "depth_line": value.lineno} if value.value > 0 else {}
    words = _words(command)
    for (word, line), (after, _) in zip(words, [*words[1:], ("", 0)], strict=False):
        number = after if word == "--depth" else word.removeprefix("--depth=") \
            if word.startswith("--depth=") else ""
        if number.isdigit() and int(number) > 0:
            return {"depth": int(number), "depth_line": line}
    return _param_depth(command, params or {})


def _param_depth(command: ast.expr | None, params: dict[str, int]) -> dict[str, object]:
    """``["git", "clone", "--depth", str(depth), ...]`` with `depth` in `params`."""
    elts = command.elts if isinstance(command, ast.List | ast.Tuple) else []
    for flag, item in pairwise(elts):
        if str_value(flag) != "--depth":
            continue
        if isinstance(item, ast.Call) and dotted(item.func) == "str" and len(item.args) == 1:
            item = item.args[0]
        name = item.id if isinstance(item, ast.Name) else ""
        if params.get(name, 0) > 0:
            return {"depth": params[name], "depth_line": flag.lineno, "depth_param": name}
    return {}


# --- interpreters, temp dirs, clones ----------------------------------------------------
def _is_eval(_col: CallRecorder, s: Site) -> bool:
    return s.full in ("eval", "exec") and s.name == s.full


def _record_eval(col: CallRecorder, s: Site) -> None:
    arg = s.node.args[0] if s.node.args else None
    col.add("eval_exec", s.node, s.ctx, name=s.full, literal=col.literal(arg, s.ctx),
            in_try=s.ctx.in_try)


def _is_tempdir(_col: CallRecorder, s: Site) -> bool:
    return s.tail in ("TemporaryDirectory", "mkdtemp") and s.full.startswith("tempfile")


def _record_tempdir(col: CallRecorder, s: Site) -> None:
    col.add("tempdir", s.node, s.ctx, name=s.tail)


def _is_clone_from(_col: CallRecorder, s: Site) -> bool:
    return s.attr == "clone_from" or s.tail == "clone_from"


def _record_clone_from(col: CallRecorder, s: Site) -> None:
    col.add("clone", s.node, s.ctx, how="GitPython clone_from", tempdir=s.ctx.tempdir,
            in_try=s.ctx.in_try, timeout=_git_timeout(s, "kill_after_timeout"),
            **_depth(None, keyword(s.node, "depth")))


def _is_git_wrapper_clone(_col: CallRecorder, s: Site) -> bool:
    # a project wrapper such as ``run_git_command(["clone", url, dest])``
    return "git" in s.name.lower() and any(
        str_value(e) == "clone" for arg in s.node.args[:2] for e in _elements(arg))


def _record_git_wrapper_clone(col: CallRecorder, s: Site) -> None:
    col.add("clone", s.node, s.ctx, how=s.name, tempdir=s.ctx.tempdir, in_try=s.ctx.in_try,
            timeout=_timeout(s), **_depth(s.node.args[0] if s.node.args else None,
                                          params=col.int_defaults(s.ctx.func)))


def _elements(arg: ast.expr | None) -> list[ast.expr]:
    if arg is None:
        return []
    if isinstance(arg, ast.List | ast.Tuple):
        return list(arg.elts)
    return [arg]


def _is_history_read(_col: CallRecorder, s: Site) -> bool:
    return s.attr == "iter_commits"  # GitPython: ``Repo(path).iter_commits()``


def _record_history_read(col: CallRecorder, s: Site) -> None:
    col.add("history", s.node, s.ctx)


# --- models: structured output, retries ---------------------------------------------------
def _is_structured(_col: CallRecorder, s: Site) -> bool:
    return s.attr in ("with_structured_output", "bind_tools")


def _record_structured(col: CallRecorder, s: Site) -> None:
    node = s.node
    schemas: list[str] = []
    defaults = col.defaults(s.ctx.func)
    for arg in node.args[:1]:
        items = arg.elts if isinstance(arg, ast.List | ast.Tuple) else [arg]
        # ``def call(llm, schema=JudicialOpinion): llm.with_structured_output(schema)``
        schemas += [defaults.get(str(dotted(i))) or resolve(dotted(i), col.imports)
                    or unparse(i, 80) for i in items]
    schema_kw = keyword(node, "schema") or keyword(node, "tools")
    if schema_kw is not None:
        schemas.append(resolve(dotted(schema_kw), col.imports) or unparse(schema_kw, 80))
    col.add("structured", node, s.ctx, how=s.attr, schemas=schemas,
            receiver=dotted(node.func.value) if isinstance(node.func, ast.Attribute) else None)


def _is_retry(_col: CallRecorder, s: Site) -> bool:
    return s.attr == "with_retry" or (keyword(s.node, "max_retries") is not None and
                                      (s.tail.startswith("Chat") or
                                       s.attr == "with_structured_output"))


def _record_retry(col: CallRecorder, s: Site) -> None:
    col.add("retry", s.node, s.ctx, how=s.attr or s.tail)


# --- LangGraph routing: Send and Command(goto=) -------------------------------------------
def _is_send(col: CallRecorder, s: Site) -> bool:
    return col.is_send(s.node)


def _record_send(col: CallRecorder, s: Site) -> None:
    target = s.node.args[0] if s.node.args else keyword(s.node, "node")
    value = str_value(target) if target is not None else None
    ref = dotted(target) if target is not None else None
    col.add("send", s.node, s.ctx, target=value, ref=ref)
    col.note(s.ctx.func, "sends", value if value is not None else {"ref": ref})


def _is_goto(_col: CallRecorder, s: Site) -> bool:
    return s.tail == "Command" and keyword(s.node, "goto") is not None


def _record_goto(col: CallRecorder, s: Site) -> None:
    goto = keyword(s.node, "goto")
    items = goto.elts if isinstance(goto, ast.List | ast.Tuple) else [goto]
    for item in items:
        value = str_value(item)
        if value is not None:
            col.note(s.ctx.func, "gotos", value)
    col.add("goto", s.node, s.ctx)


# --- model calls and parsing ----------------------------------------------------------------
def _receiver(s: Site) -> str:
    return (dotted(s.node.func.value) or "") if isinstance(s.node.func, ast.Attribute) else ""


def _is_llm_invoke(_col: CallRecorder, s: Site) -> bool:
    receiver = _receiver(s)
    last = receiver.rsplit(".", 1)[-1]
    # a provider SDK's chat call (``client.chat.completions.create``) is a model call too:
    # its answer is the model's, whatever the code does with it
    return bool(receiver) and ((s.attr in LLM_METHODS and bool(LLM_RECEIVER.search(last)))
                               or last in SDK_CHAT.get(s.attr, ()))


def _record_llm_invoke(col: CallRecorder, s: Site) -> None:
    col.add("llm_invoke", s.node, s.ctx, receiver=_receiver(s), in_try=s.ctx.in_try,
            in_attempt_loop=s.ctx.in_attempt_loop)


def _is_llm_ctor(_col: CallRecorder, s: Site) -> bool:
    return s.full.startswith(LLM_PACKAGES) and s.tail[:1].isupper()


def _record_llm_ctor(col: CallRecorder, s: Site) -> None:
    col.add("llm_ctor", s.node, s.ctx, name=s.full)


def _is_sdk_reply(_col: CallRecorder, s: Site) -> bool:
    if s.attr not in SDK_REPLIES:
        return False
    receiver = _receiver(s).rsplit(".", 1)[-1]
    return bool(receiver) and (not SDK_REPLIES[s.attr] or receiver in SDK_REPLIES[s.attr])


def _record_sdk_reply(col: CallRecorder, s: Site) -> None:
    col.add("sdk_reply", s.node, s.ctx, receiver=_receiver(s))


def _is_validate(_col: CallRecorder, s: Site) -> bool:
    return s.attr in ("model_validate", "model_validate_json", "parse_obj", "parse_raw")


def _record_validate(col: CallRecorder, s: Site) -> None:
    col.add("validate", s.node, s.ctx, name=dotted(s.node.func))


def _is_freeform_parse(col: CallRecorder, s: Site) -> bool:
    # the reply of a model call, not any value named content (`replies`)
    return s.full == "json.loads" and bool(s.node.args) and from_content(
        col, s.node.args[0], s.ctx)


def _record_freeform_parse(col: CallRecorder, s: Site) -> None:
    col.add("freeform_parse", s.node, s.ctx, in_try=s.ctx.in_try)


# --- beside any of the above ----------------------------------------------------------------
def _in_tempdir(_col: CallRecorder, s: Site) -> bool:
    return s.ctx.tempdir and bool(s.name)


def _record_in_tempdir(col: CallRecorder, s: Site) -> None:
    # A helper called inside ``with TemporaryDirectory()`` (e.g. clone_repo(url, tmp))
    # runs in the sandbox; the clone finding follows the call by the helper's name.
    col.add("in_tempdir", s.node, s.ctx, callee=s.name.rsplit(".", 1)[-1])


def _passes_content(col: CallRecorder, s: Site) -> bool:
    return bool(content_args(col, s.node, s.ctx))


def _record_passes_content(col: CallRecorder, s: Site) -> None:
    col.add("content_passed", s.node, s.ctx, callee=s.name,
            args=content_args(col, s.node, s.ctx))


# The order matters: the first rule that applies decides (``os.system`` is a process, never
# also a model call; ``with_structured_output(max_retries=...)`` binds a schema).
EXCLUSIVE: tuple[Rule, ...] = (
    Rule("os_process", _is_os_process, _record_os_process),
    Rule("subprocess", _is_subprocess, _record_subprocess),
    Rule("async_process", _is_async_process, _record_async_process),
    Rule("eval_exec", _is_eval, _record_eval),
    Rule("tempdir", _is_tempdir, _record_tempdir),
    Rule("clone_from", _is_clone_from, _record_clone_from),
    Rule("structured", _is_structured, _record_structured),
    Rule("retry", _is_retry, _record_retry),
    Rule("send", _is_send, _record_send),
    Rule("goto", _is_goto, _record_goto),
    Rule("git_wrapper_clone", _is_git_wrapper_clone, _record_git_wrapper_clone),
    Rule("llm_invoke", _is_llm_invoke, _record_llm_invoke),
    Rule("llm_ctor", _is_llm_ctor, _record_llm_ctor),
    Rule("sdk_reply", _is_sdk_reply, _record_sdk_reply),
    Rule("validate", _is_validate, _record_validate),
    Rule("freeform_parse", _is_freeform_parse, _record_freeform_parse),
    Rule("history_read", _is_history_read, _record_history_read),
)
ALWAYS: tuple[Rule, ...] = (
    Rule("in_tempdir", _in_tempdir, _record_in_tempdir),
    Rule("content_passed", _passes_content, _record_passes_content),
)
