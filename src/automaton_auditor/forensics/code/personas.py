"""Persona prompts, wherever they live (string constants, prompt files, YAML/JSON),
and how much text they share (above 50 %: persona collusion).

When the judges' model calls can be followed (`judge_prompts`), the facts rest on the text
each call receives: a template filled with a persona's fields counts only the fields that
reach it, the template itself is shared, and a persona's bare name is no philosophy. The
personas are compared by their own text, and ``judges.persona_text`` says whether each has
more than a sentence or two of it. Otherwise the longest string constant or prompt file
naming each persona stands for its prompt, or the entries the judges read by persona from a
data file (`persona_data`: a rubric's per-persona logic). When what the graph runs is known
(`structured_output.wired_scope`), prompts in code nothing runs are left out.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from itertools import combinations, permutations
from pathlib import Path
from typing import Any

from automaton_auditor.forensics.code.blocked import Undefined
from automaton_auditor.forensics.code.common import JSON, split_loc
from automaton_auditor.forensics.code.data_files import load_data
from automaton_auditor.forensics.code.judge_prompts import (
    Prompt,
    judge_prompts,
    own_text,
    persona_messages,
    shared_share,
)
from automaton_auditor.forensics.code.liveness import Scope
from automaton_auditor.forensics.code.persona_data import data_candidates
from automaton_auditor.forensics.code.replies import LLM_PACKAGES
from automaton_auditor.forensics.code.source import line_at
from automaton_auditor.forensics.code.walk import read_facts
from automaton_auditor.state import Finding
from automaton_auditor.text import clip

PERSONAS = {"Prosecutor": re.compile(r"prosecut", re.I),
            "Defense": re.compile(r"defen[cs]e", re.I),
            "TechLead": re.compile(r"tech[\s_-]?lead", re.I)}
TONE = {"Prosecutor": re.compile(r"gap|flaw|secur|lazy|laziness|strict|critic|advers|skeptic|"
                                 r"harsh|penal|cynic|suspic|distrust|trust no|unsafe|"
                                 r"violat|cut corners", re.I),
        "Defense": re.compile(r"effort|intent|creativ|generous|reward|credit|forgiv|spirit",
                              re.I),
        "TechLead": re.compile(r"architect|maintainab|practical|pragmatic|viab|sound", re.I)}
# What a prompt that sends its judge after security flaws says (the report's claim is read
# against it: `forensics.persona_claims`).
SECURITY = re.compile(r"secur|vulnerab|unsafe|injection|saniti[sz]|os\.system|shell|exploit|"
                      r"malicious", re.I)
PROMPT_FILE = re.compile(r"\.(md|txt|ya?ml|json|j2|jinja2?|prompt|toml)$", re.I)
PROMPT_PATH = re.compile(r"prompt|persona|judge|prosecut|defen[cs]e|tech[_-]?lead", re.I)
COLLUSION = 0.5
# Modules through which a judge could reach a model: the chat-model packages the call facts
# know (`classify.LLM_PACKAGES`), other LLM clients, and HTTP clients (a REST call to a model
# API). A repository that imports none of them anywhere sends its persona prompts to no model.
MODEL_REACH = (*LLM_PACKAGES, "langchain", "langgraph.prebuilt", "google.generativeai",
               "google.genai", "vertexai", "ollama", "groq", "litellm", "mistralai", "cohere",
               "transformers", "huggingface_hub", "llama_index", "llama_cpp", "dspy",
               "instructor", "boto3", "requests", "httpx", "aiohttp", "urllib.request")
MIN_OWN_WORDS = 40  # a persona's own instructions: more than a sentence or two
# Under it, a thin persona with at least this many words has two or three sentences of its
# own (graded cap 3, `thin_cap`); with fewer, a sentence or only its name (cap 2).
FEW_OWN_WORDS = 30
MAX_PROMPT_FILE = 200_000


def _persona_of(name: str, text: str) -> str | None:
    for persona, pattern in PERSONAS.items():
        if pattern.search(name):
            return persona
    hits = {p: m.start() for p, pat in PERSONAS.items() if (m := pat.search(text[:400]))}
    if len(hits) == 1:
        return next(iter(hits))
    return None


def _candidates(repo: Path, files: list[str], facts: dict[str, JSON],
                scope: Scope | None = None) -> list[JSON]:
    """Every string and prompt file that may be a persona's prompt; a string in code the
    graph never runs (by `scope`) is marked ``idle``."""
    found: list[JSON] = []
    for path in sorted(facts):
        for item in facts[path].get("strings") or []:
            label = f"{item['func']}.{item['var']}" if item["var"] else item["func"]
            found.append({"loc": f"{path}:{item['line']}", "name": label,
                          "text": item["text"], **({"idle": True} if scope is not None
                                                   and not scope.runs(path, str(item["func"]))
                                                   else {})})
    for path in files:
        if is_prompt_file(path):
            found += _file_prompts(repo, path)
    return found


def is_prompt_file(path: str) -> bool:
    """A text, YAML, JSON or template file named like a prompt or a persona, outside the
    folders that hold documents and audit reports."""
    return bool(PROMPT_FILE.search(path) and PROMPT_PATH.search(path)) and \
        not path.lower().startswith(("docs/", "reports/", "audit/"))


def _file_prompts(repo: Path, path: str) -> list[JSON]:
    target = repo / path
    try:
        if target.is_symlink() or target.stat().st_size > MAX_PROMPT_FILE:
            return []
        text = target.read_text("utf-8", errors="replace")
    except OSError:
        return []
    data = load_data(path, text) if path.endswith((".yaml", ".yml", ".json")) else None
    if isinstance(data, dict):
        try:
            return [{"loc": f"{path}:{_line_of(text, key)}", "name": f"{path}:{key}",
                     "text": _flatten(value)} for key, value in data.items()]
        except RecursionError:  # nested deeper than a walk can go: read as plain text
            pass
    return [{"loc": f"{path}:1", "name": path, "text": text}]


def _line_of(text: str, key: Any) -> int:
    index = text.find(str(key))
    return text.count("\n", 0, index) + 1 if index >= 0 else 1


def _flatten(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(_flatten(v) for v in value.values())
    if isinstance(value, list):
        return "\n".join(_flatten(v) for v in value)
    return ""


def thin_cap(words: dict[str, int]) -> int:
    """The score a thin persona text leaves room for (``data["cap"]``): 2 when a persona has
    under `FEW_OWN_WORDS` words of its own, else 3 (two or three sentences each)."""
    return 2 if min(words.values(), default=0) < FEW_OWN_WORDS else 3


def overlap(a: str, b: str) -> float:
    """Share of text two prompts have in common (word-level matching, 0-1)."""
    wa, wb = a.lower().split(), b.lower().split()
    if not wa or not wb:
        return 0.0
    return SequenceMatcher(None, wa, wb, autojunk=False).ratio()


def _pick(candidates: list[JSON]) -> dict[str, JSON]:
    """Each persona's prompt: a text whose name (file, function, variable) names the
    persona before one that only mentions it (a Chief Justice's remark on "Defense
    arguments"), then the longest. A text with no word (an empty ``prosecutor.txt``) is
    no prompt, whatever its name."""
    chosen: dict[str, tuple[tuple[bool, int], JSON]] = {}
    for item in candidates:
        persona = item.get("persona") or _persona_of(item["name"], item["text"])
        if not persona or not str(item["text"]).strip():
            continue
        rank = (bool(item.get("persona") or PERSONAS[persona].search(item["name"])),
                len(item["text"]))
        if persona not in chosen or rank > chosen[persona][0]:
            chosen[persona] = (rank, item)
    return {p: chosen[p][1] for p in PERSONAS if p in chosen}


def persona_findings(repo: Path, files: list[str], facts: dict[str, JSON],
                     scope: Scope | None = None,
                     undefined: Undefined | None = None,
                     resolved: dict[str, Prompt] | None = None) -> list[Finding]:
    """``judges.personas``, ``judges.collusion`` and ``judges.persona_tone`` (and, when the
    judges' model calls could be followed, ``judges.persona_text``,
    ``judges.fail_before_model`` and ``llm.fail_before_model``); with a `scope` (what the
    graph runs), prompts in code nothing runs are left out; `undefined`
    (`blocked.undefined_reads`) are the names that fail when read; `resolved`: the
    `judge_prompts` already read with them."""
    everything = _candidates(repo, files, facts, scope)
    candidates = [c for c in everything if not c.get("idle")]
    chosen = _pick(candidates)
    if resolved is None:
        parsed = [p for p, f in facts.items() if "skipped" not in f and "error" not in f]
        resolved = judge_prompts(repo, sorted(facts), parsed, scope, undefined)
    if len(resolved) >= max(2, len(chosen)):
        return _resolved_findings(repo, resolved)
    # the calls could not be followed: entries the judges read by persona from a data file
    # (a rubric's per-persona logic) are prompt text too
    candidates += data_candidates(repo, files, sorted(facts), scope)
    chosen = _pick(candidates)
    pairs = {f"{a}/{b}": round(overlap(chosen[a]["text"], chosen[b]["text"]), 3)
             for a, b in combinations(chosen, 2)}
    quote = "\n\n".join(f"[{p}] {i['loc']}:\n{i.get('quote') or i['text'][:500]}"
                        for p, i in chosen.items())
    loc = next(iter(chosen.values()))["loc"] if chosen else "."
    tone = {p: bool(TONE[p].search(i["text"])) for p, i in chosen.items()}
    where = {p: i["loc"] for p, i in chosen.items()}
    security = {p: bool(SECURITY.search(i["text"])) for p, i in chosen.items()}
    # prompts left out because nothing the graph runs holds them are named, not denied
    idle = {p: i["loc"] for p, i in _pick(everything).items()
            if p not in chosen} if len(chosen) < len(PERSONAS) else {}
    return [*_findings(chosen, pairs, tone, quote, loc, {"locations": where,
                                                         "security": security, "idle": idle}),
            *_no_model(repo, facts, chosen, quote, loc),
            *_thin_constants(chosen, candidates, loc, quote)]


def _thin_constants(chosen: dict[str, JSON], candidates: list[JSON], loc: str,
                    quote: str) -> list[Finding]:
    """``judges.persona_text`` when the judges' model calls cannot be followed: a persona's
    own instructions are at most every prompt text named for it together, so a persona
    whose texts add up to under `MIN_OWN_WORDS` words has only a sentence or two of its
    own. Stated only then (long texts may still be mostly a shared template, which only the
    followed call shows), with less confidence than the followed reading."""
    texts: dict[str, dict[str, int]] = {}
    traced: dict[str, bool] = {}
    for item in candidates:
        persona = item.get("persona") or _persona_of(item["name"], item["text"])
        if persona in chosen:  # a data file's entries, one per read: the longest counts
            texts.setdefault(persona, {})[str(item["text"])] = int(
                item.get("per_read", len(str(item["text"]).split())))
            traced[persona] = traced.get(persona, True) and bool(item.get("reaches"))
    words = {p: sum(texts.get(p, {}).values()) for p in chosen}
    thin = sorted(p for p, n in words.items() if n < MIN_OWN_WORDS)
    if len(chosen) < 3 or not thin:
        return []
    # every text of a thin persona is a data entry the code reads by persona and is seen
    # to put in a prompt: its source is followed, as sure as a followed call
    followed = all(traced.get(p) for p in thin)
    return [Finding(
        facet="judges.persona_text", goal="Each persona's model call receives instructions "
        "of its own, not only its name in a shared template", found=False, pattern="success",
        location=loc, content=quote or None, confidence=0.8 if followed else 0.7,
        rationale=(f"Words in all the prompt texts named for each persona: {words}; under "
                   f"{MIN_OWN_WORDS}: {', '.join(thin)}. "
                   + ("Each is read by persona from a data file and put in the prompt "
                      "(entries count by the longest: one read gives one entry)."
                      if followed else "The judges' model calls could not be followed; "
                      "this is all the text of their own they can have.")),
        data={"own_words": words, "thin": thin, "min_own_words": MIN_OWN_WORDS,
              "followed": followed, "cap": thin_cap(words)})]


def _model_imports(repo: Path, facts: dict[str, JSON]) -> list[str] | None:
    """The model, LLM client and HTTP libraries the repository's Python files import (the
    files the prefilter skipped are parsed for it), or None when a file cannot be parsed."""
    def reach(files: list[JSON]) -> list[str]:
        return sorted({full for f in files for full in (f.get("imports") or {}).values()
                       if str(full).startswith(MODEL_REACH)})

    found = reach(list(facts.values()))
    if found:
        return found
    every = [facts[p] if "skipped" not in facts[p] else read_facts(repo, p, force=True)
             for p in sorted(facts)]
    return None if any("error" in f for f in every) else reach(every)


def _no_model(repo: Path, facts: dict[str, JSON], chosen: dict[str, Any], quote: str,
              loc: str) -> list[Finding]:
    """``judges.no_model``: persona prompts exist, but no file of the repository imports a
    library a model call could go through, so no prompt is ever sent and each judge's score
    is whatever its code fixes (the rubric's "scores random or purely praise/criticism")."""
    reach = _model_imports(repo, facts) if len(chosen) >= 2 else None
    if reach is None:
        return []
    return [Finding(
        facet="judges.no_model", goal="The judges send their persona prompts to no model",
        found=not reach, pattern="failure", location=loc, content=quote or None,
        confidence=0.8, data={"model_imports": reach[:10]},
        rationale="No file imports a model or HTTP client library: the persona prompts are "
                  "never sent, so the judges' scores come from code, not from the personas."
        if not reach else f"Model libraries imported: {', '.join(reach[:5])}.")]


def _findings(chosen: dict[str, Any], pairs: dict[str, float], tone: dict[str, bool],
              quote: str, loc: str, data: JSON, distinct: bool = True) -> list[Finding]:
    colluding = {k: v for k, v in pairs.items() if v > COLLUSION}
    return [
        Finding(facet="judges.personas", goal="Distinct Prosecutor, Defense and TechLead "
                "persona prompts exist", found=len(chosen) == 3 and distinct,
                pattern="success", location=loc, content=quote or None, confidence=0.8,
                rationale=f"Persona prompts found for: {', '.join(chosen) or 'none'}"
                + ("." if distinct else " (they differ only by the persona's name).")
                + (" In code the graph never runs: " + ", ".join(
                    f"{p} ({at})" for p, at in data["idle"].items()) + "."
                   if data.get("idle") else ""),
                data=data),
        Finding(facet="judges.collusion", goal="Persona prompts share more than 50% of text",
                found=bool(colluding), pattern="failure", location=loc, content=quote or None,
                confidence=0.8 if len(chosen) >= 2 else 0.4,
                rationale=(f"Pairwise shared text: {pairs}." + (
                    " Compared on the messages that carry persona text (the system prompts "
                    "when they do): a message every judge receives from the same lines (the "
                    "task, evidence and answer format) is left out." if data.get(
                        "messages_left_out") else "") if pairs else
                           "Fewer than two persona prompts to compare."),
                data={"overlap": pairs, "threshold": COLLUSION}),
        Finding(facet="judges.persona_tone", goal="Prosecutor is adversarial, Defense rewards "
                "effort, TechLead weighs architecture", found=len(tone) == 3 and all(
                    tone.values()), pattern="success", location=loc, content=quote or None,
                confidence=0.6, rationale=f"Tone keywords present per persona: {tone}.",
                data={"tone": tone}),
    ]


def _resolved_findings(repo: Path, prompts: dict[str, Prompt]) -> list[Finding]:
    """The facts, from the text each judge's model call receives."""
    counts = own_text(prompts)
    own = {p: str(c.pop("own_text")).strip() for p, c in counts.items()}
    pairs = {f"{a}/{b}": shared_share(prompts[a], prompts[b])
             for a, b in combinations(prompts, 2)}
    tone = {p: bool(TONE[p].search(own[p])) for p in prompts}
    quote = _quote(repo, prompts, counts)
    loc = prompts[next(iter(prompts))].call
    data: JSON = {"locations": {p: c.call for p, c in prompts.items()},
                  # whether the whole text the persona's model call receives names security
                  "security": {p: bool(SECURITY.search(c.text.text()))
                               for p, c in prompts.items()},
                  "prompt_words": {p: {**c, "own_lines": c["own_lines"][:12]}
                                   for p, c in counts.items()},
                  "messages_left_out": any(persona_messages(prompts[a], prompts[b])
                                           is not prompts[a]
                                           for a, b in permutations(prompts, 2))}
    distinct = all(c["own_words"] > 0 for c in counts.values())
    thin = {p: c["own_words"] for p, c in counts.items() if c["own_words"] < MIN_OWN_WORDS}
    shared = max(c["shared_words"] for c in counts.values())
    text_fact = Finding(
        facet="judges.persona_text", goal="Each persona's model call receives instructions "
        "of its own, not only its name in a shared template",
        found=len(prompts) == 3 and not thin, pattern="success", location=loc, content=quote,
        confidence=0.8 if len(prompts) == 3 else 0.5,
        rationale=("Own words per persona in the prompt its model call receives: "
                   f"{ {p: c['own_words'] for p, c in counts.items()} } beside {shared} "
                   f"words of shared template; under {MIN_OWN_WORDS}: "
                   f"{', '.join(thin) or 'none'}."),
        data={"own_words": {p: c["own_words"] for p, c in counts.items()},
              "shared_words": shared, "thin": sorted(thin), "min_own_words": MIN_OWN_WORDS,
              "cap": thin_cap(thin) if thin else None})
    return [*_findings(prompts, pairs, tone, quote, loc, data, distinct), text_fact,
            *_unreached(repo, prompts)]


def _unreached(repo: Path, prompts: dict[str, Prompt]) -> list[Finding]:
    """Judges that fail before their model call: a name read on the way is never bound, so
    the persona's prompt is never sent (``judges.fail_before_model``); when every judge
    fails so, no judge call ever returns its schema (``llm.fail_before_model``)."""
    stopped = {p: list(prompt.blocked) for p, prompt in prompts.items() if prompt.blocked}
    every = bool(stopped) and len(stopped) == len(prompts)
    lines = sorted({w for ws in stopped.values() for w in ws}, key=split_loc)
    calls = sorted({prompts[p].call for p in stopped}, key=split_loc)
    quote = "\n".join([*(line_at(repo, *split_loc(w), limit=160) for w in lines[:8]),
                       *(f"model call {line_at(repo, *split_loc(c), limit=160)}"
                         for c in calls[:3])]) or None
    loc = lines[0] if lines else "."
    where = f"{', '.join(lines[:6])}{', ...' if len(lines) > 6 else ''}"
    said = (f"The {', '.join(stopped)} judge(s) read a name that is never bound ({where}) "
            "before every model call they make: each fails with NameError first, so "
            f"{'no persona prompt is ever sent' if every else 'their prompts are never sent'}."
            if stopped else
            "No judge reads an unbound name on every path to its model call.")
    data: JSON = {"blocked": stopped, "calls": calls, "judges": sorted(prompts),
                  "cap": 2 if every else 3}
    return [
        Finding(facet="judges.fail_before_model", goal="A judge fails before its model call "
                "(a name it reads is never bound)", found=bool(stopped), pattern="failure",
                location=loc, content=quote, confidence=0.85, rationale=said, data=data),
        Finding(facet="llm.fail_before_model", goal="Every judge fails before its model call, "
                "so no structured opinion is ever returned", found=every, pattern="failure",
                location=loc, content=quote, confidence=0.85, rationale=said, data=data),
    ]


def _quote(repo: Path, prompts: dict[str, Prompt], counts: dict[str, JSON]) -> str:
    """Per persona: the model call, the entry read, and the lines its own text comes from;
    then the template lines every persona shares."""
    blocks = []
    for persona, prompt in prompts.items():
        lines = [line_at(repo, *split_loc(where), limit=160)
                 for where in counts[persona]["own_lines"][:4]]
        blocks.append(f"[{persona}] model call {prompt.call} (from {prompt.entry}); "
                      f"own text {counts[persona]['own_words']} words:\n" +
                      ("\n".join(lines) or "(none: only the persona's name)"))
    first = next(iter(prompts.values()))
    keys = [set(p.text.parts) for p in prompts.values()]
    shared = sorted({w for part in first.text.parts if all(part in k for k in keys)
                     for w in [part[1]]})[:4]
    blocks.append("shared template:\n" + "\n".join(line_at(repo, *split_loc(w), limit=160)
                                                     for w in shared))
    return clip("\n\n".join(blocks), 3000)


