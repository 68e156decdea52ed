"""What the report claims about the code's features (parallel judges, a fan-in ...).

The file paths it cites are read by `citations`. Extraction runs in the doc detective; the check
against the code (`forensics.crosscheck`) runs in the aggregator, after fan-in.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from automaton_auditor.forensics.pdf.chunks import SENTENCE_SPLIT
from automaton_auditor.forensics.pdf.libraries import (
    FACT_SUPREMACY,
    LIBRARY_USE,
    MANAGER_CLAIM,
    TESTS_CLAIM,
)
from automaton_auditor.forensics.pdf.qualifiers import as_shortfall
from automaton_auditor.state import FeatureClaim

_PARALLEL = (r"\b(?:in parallel|parallel(?:ly|ism)?|concurrent(?:ly)?|simultaneous(?:ly)?|"
             r"fan[\s-]?out)\b")
FEATURES: dict[str, tuple[str, str]] = {
    # feature: (subject pattern, claim pattern), both must appear in one sentence
    "parallel_judges": (r"\b(?:judges?|judicial|prosecutor|defen[cs]e|tech\s?lead)\b", _PARALLEL),
    "parallel_detectives": (r"\b(?:detectives?|investigators?|doc\s?analyst|vision\s?inspector)\b",
                            _PARALLEL),
    "fan_in": (r"\b(?:aggregat\w*|fan[\s-]?in|synchroni[sz]\w*|join)\b",
               r"\b(?:fan[\s-]?in|waits?|collects?|merges?|gathers?|synchroni[sz]\w*)\b"),
    "conditional_routing": (r"\bconditional(?:\s+\w+)?\s+(?:edges?|routing|routes?|branch\w*)\b",
                            r"."),
}
_NEGATION = re.compile(r"\b(?:not|never|no longer|instead of|rather than|sequential(?:ly)?|"
                       r"cannot|can't|don't|doesn't|isn't|aren't|won't)\b", re.IGNORECASE)
# A sentence that says a feature is absent: the judges run one after another ("the three
# judges are invoked inside one node in sequence"), or the graph lacks conditional edges
# ("remaining gaps (e.g. conditional edges for ...)", "no conditional edges"). The subject
# must be the judges themselves, so "the pipeline runs in sequence from detectives to judges"
# denies nothing.
_JUDGES = r"(?:judges|personas|judge\s+nodes|judicial\s+(?:panel|nodes|personas))"
_IN_SEQUENCE = (r"(?:in\s+sequence|sequentially|one\s+after\s+(?:the\s+)?(?:an)?other|"
                r"one\s+at\s+a\s+time)")
# ... or a node that loops over them ("a single node that loops over dimensions and judges
# sequentially").
SEQUENTIAL_JUDGES = re.compile(
    rf"\b{_JUDGES}\s+(?:are|is|were|run|execute|get)\s+(?:\w+\s+){{0,6}}?(?:{_IN_SEQUENCE}|"
    r"(?:inside|within|in)\s+(?:one|a\s+single)\s+(?:node|function))\b"
    rf"|\b(?:loops?|iterates?|iterating|looping)\s+(?:over|through)\s+(?:[\w,]+\s+){{0,4}}?"
    rf"{_JUDGES}\s+{_IN_SEQUENCE}\b", re.IGNORECASE)
# "No true parallel execution of judges": the absence named as such, an admitted gap.
NO_PARALLEL_JUDGES = re.compile(
    r"\b(?:no|without|lacks?|lacking|missing)\s+(?:true\s+|real\s+|actual\s+|genuine\s+)?"
    r"(?:parallel(?:ism)?|concurren\w+)(?:\s+(?:execution|invocation|runs?))?\s+"
    rf"(?:of|for|across|among|between)\s+(?:the\s+)?(?:three\s+|3\s+)?{_JUDGES}\b",
    re.IGNORECASE)
# A graph node said to be left out of the graph ("VisionInspector currently commented out in
# graph.py", "judge_sync is not wired"): `name` is read against the nodes the code wires.
# "Disabled" is not read: a wired node may well be switched off by a setting.
# A gap-list item naming a missing component: "• No judicial layer (Prosecutor, ...)",
# "No ChiefJusticeNode or deterministic conflict resolution" (`named`: at most three words,
# closing the item or followed by a bracket, a dash, "or", "yet"), never a description that
# goes on ("No judge sees another's opinion").
# A verb after "no X" makes it a statement about the system, not a missing part: "No judge
# or aggregator can mutate the evidence", "no evidence was lost or overwritten".
_NO_VERB = (r"(?:can|cannot|could|may|might|will|would|shall|should|must|is|are|was|were|"
            r"been|has|have|had|does|do|did|ever)\b")
NO_COMPONENT = re.compile(
    rf"(?:^|[\u2022\u25cf*-])\s*no\s+(?P<named>(?:(?!{_NO_VERB})[\w/-]+\s+){{0,2}}"
    rf"(?!{_NO_VERB})[\w/-]+)(?!\s+or\s+(?:[\w/-]+\s+){{0,2}}?{_NO_VERB})"
    r"\s*(?=$|[(\u2014:;,.]|\bor\b|\byet\b)", re.IGNORECASE)
DISABLED_NODE = re.compile(
    r"(?P<name>\b[A-Za-z_]\w*(?:\s+(?-i:[A-Z])\w*){0,2})\s+(?:node\s+|agent\s+)?"
    r"(?:(?:is|are|was|were|remains?|has\s+been|have\s+been)\s+)?"
    r"(?:currently\s+|still\s+|temporarily\s+)?(?:commented[\s-]*out|"
    r"not\s+(?:yet\s+)?(?:wired|connected|registered))\b",
    re.IGNORECASE)
# Words that put work in the plan, not the code: one list, read as a status by `PLANNED`
# and `NOT_STARTED`, and anywhere in a sentence by the hedges that need less
# (`forensics.synthesis_claims`).
PLAN_WORDS = r"plan(?:s|ned|ning)?|pending|todo|tbd|future|deferred"  # not "planner"
# A priority tag: "(P1)", "[P0]", "P2:"; "P1" alone names no priority ("the P1 queue").
_PRIORITY = r"(?:[(\[]\s*p[0-3]\s*[)\]]|\bp[0-3]\s*[:\u2013\u2014])"
# A sentence that marks what it names as a plan, not as built: a plan word as a status, in
# brackets ("Conditional Edges (Future Enhancement):", "[TODO]"), after "status:", or beside a
# priority tag ("conditional edge automation pending (P1)", "P1: planned"). A plan word used
# otherwise ("routes pending evidence", "works as planned") and a bare "P1" mark nothing.
PLANNED = re.compile(
    rf"[(\[]\s*(?:{PLAN_WORDS})\b[^()\[\]]{{0,30}}[)\]]"
    rf"|\bstatus\s*[:\u2014\u2013-]\s*(?:{PLAN_WORDS})\b"
    rf"|\b(?:{PLAN_WORDS})\s*{_PRIORITY}|{_PRIORITY}\s*(?:{PLAN_WORDS})\b", re.IGNORECASE)
# A graph node given a status of not begun ("Phase 4 \u2014 DocAnalyst Status: Not started",
# "VisionInspector: not yet started", "Judge sync \u2014 Status: TODO"): `name` is read against
# the nodes the code wires; a bare "TODO" or "planned" counts only as a status label's value.
NOT_STARTED = re.compile(
    r"(?P<name>\b[A-Za-z_]\w*(?:\s+(?!status\b)(?-i:[A-Z])\w*){0,2})\s*(?:[:\u2014\u2013-]\s*)?"
    r"(?:(?:status\s*[:\u2014\u2013-]\s*)?not\s+(?:yet\s+)?(?:started|begun)"
    rf"|status\s*[:\u2014\u2013-]\s*(?:{PLAN_WORDS}))\b", re.IGNORECASE)
# A graph node said to do its work now ("The VisionInspector analyzes the diagrams",
# "DocAnalyst: extracts claims", "... in a simulation phase; it classifies diagrams"),
# read against the function the node runs (`forensics.stub_claims`). `name` and `subject`
# are identifiers (CamelCase or snake_case), never an ordinary word.
_NODE_NAME = r"(?-i:[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+|[a-z][a-z0-9]*(?:_[a-z0-9]+)+)"
_WORKS = (r"(?P<verb>analy[sz]es|classifies|inspects|examines|extracts|detects|identifies|"
          r"parses|reads|scans|compares|verifies|validates|evaluates|interprets|processes|maps|"
          r"converts|reviews|assesses|audits|investigates|traces|retrieves|computes|"
          r"calculates|generates|produces|summari[sz]es|recogni[sz]es|searches|finds|scores|"
          r"grades|synthesi[sz]es|aggregates|merges|collects|gathers|clones|fetches|loads|"
          r"describes|checks|uses|utili[sz]es|leverages|employs|calls|invokes|queries|sends|builds|"
          r"performs|runs|executes|applies|enforces|resolves|determines|decides|handles|"
          r"works|(?:is|are)\s+(?:now\s+|fully\s+)?(?:implemented|functional|working|"
          r"operational))\b")
_ADVERB = r"(?:(?:now|also|currently|then|automatically|actively)\s+)?"
NODE_WORKS = re.compile(
    rf"\b(?P<name>{_NODE_NAME})(?:\s+(?:node|agent|detective))?(?:\s*[:\u2014\u2013]\s*|\s+)"
    rf"{_ADVERB}{_WORKS}"
    rf"|\b(?P<subject>{_NODE_NAME})\b[^.;]{{0,120}}?[;,]\s*(?:and\s+|but\s+)?"
    rf"(?:it|this\s+node)\s+{_ADVERB}{_WORKS.replace('?P<verb>', '?P<verb2>')}", re.IGNORECASE)
# A node the report says is a stand-in ("VisionInspector is a stub", "DocAnalyst: not yet
# implemented"): what it says elsewhere that node does describes the design.
_STAND_IN = (r"(?:stub\w*|placeholders?|unimplemented|not\s+(?:yet\s+)?(?:been\s+)?(?:implemented|"
             r"built|functional|working|started)|skeletons?|scaffold\w*|mock\w*|dummy|no-?op|"
             r"todo|planned)")
NODE_ADMITTED = re.compile(rf"\b(?P<name>{_NODE_NAME})\b[^.;]{{0,80}}?\b{_STAND_IN}\b"
                           rf"|\b{_STAND_IN}\b[^.;]{{0,40}}?\b(?P<subject>{_NODE_NAME})\b",
                           re.IGNORECASE)
NO_CONDITIONAL = re.compile(
    r"\b(?:no|missing|lacks?|lacking|gaps?)\b[\s(:]*(?:e\.\s?g\.,?\s*|such\s+as\s+)?"
    r"(?:\w+\s+){0,2}?conditional\s+(?:edges?|routing)\b"
    r"|\bconditional\s+(?:edges?|routing)\b(?:(?!\b(?:if|when|unless|routes?|sends?)\b)"
    r"[^.;]){0,80}?\b(?:are|is)\s+(?:still\s+)?(?:missing|absent|lacking)\b",
    re.IGNORECASE)
# "It does not average judge scores", "rules rather than probabilistic averaging", "verdicts
# rather than opaque averaged outputs" (after "rather than", any two words: the contrast
# itself denies the average; after "not", "no", "without" only a plain-average word, since
# "no weighted averaging" denies only the weights).
NO_AVERAGING = re.compile(
    r"\b(?:does\s+not|doesn't|do\s+not|don't|never)\s+(?:simply\s+|just\s+)?average\w*"
    r"|\b(?:rather\s+than|instead\s+of)\s+(?:a\s+|an\s+)?(?:[\w-]+\s+){0,2}?averag\w*"
    r"|\b(?:not|no|without)\s+(?:a\s+|an\s+)?(?:simple\s+|plain\s+|"
    r"naive\s+|probabilistic\s+|mere\s+|score\s+)?averag\w*", re.IGNORECASE)
# "No prompt engineering or structured output integration", "with_structured_output(
# JudicialOpinion) not implemented", "no with_structured_output() usage".
_STRUCTURED = r"(?:\.?with_structured_output\(\)|structured[\s-]outputs?)"
NO_STRUCTURED = re.compile(
    rf"\bno\s+(?:(?:[\w-]+\s+){{1,3}}(?:or|and|nor)\s+)?{_STRUCTURED}"
    r"|\bwith_structured_output\([^()]{0,60}\)\s*(?:is\s+|are\s+)?not\s+(?:yet\s+)?"
    r"(?:implemented|used|integrated|called|wired|bound)\b"
    r"|\bstructured[\s-]outputs?\s+(?:is\s+|are\s+)?(?:not\s+(?:yet\s+)?(?:implemented|used|"
    r"integrated|enforced)|missing|absent)\b", re.IGNORECASE)
# The same features stated, for the text around a denial (`qualifiers.stated`): the judges
# run in parallel ("the three judges execute concurrently"), the scores are averaged ("THEN
# Use average", "the mean of the judges' scores"); a weighted average is another feature.
PARALLEL_JUDGES_STATED = re.compile(
    rf"\b{_JUDGES}\s+(?:\w+\s+){{0,3}}?(?:run|execute|are\s+(?:run|executed|invoked|called|"
    r"dispatched))\w*\s+(?:\w+\s+){0,3}?(?:in\s+parallel|concurrently|simultaneously)\b"
    r"|\b(?:parallel|concurrent)\s+(?:execution|invocation)\s+of\s+(?:the\s+)?(?:three\s+|3\s+)?"
    rf"{_JUDGES}\b", re.IGNORECASE)
_SCORES = r"(?:scores?|opinions?|verdicts?|votes?)"
MEAN_STATED = re.compile(
    r"\b(?:uses?|using|takes?|taking|computes?|computing|returns?|applies|"
    r"apply|falls?\s+back\s+to)\s+(?:the\s+|an?\s+|their\s+)?(?:simple\s+|plain\s+|"
    r"arithmetic\s+)?(?:average|mean)\b"
    rf"|(?<!weighted\s)\b(?:average\s+(?:of\s+)?|mean\s+of\s+)(?:the\s+|all\s+)?(?:three\s+|3\s+)?"
    rf"(?:judges?['\u2019]?s?\s+|personas?['\u2019]?s?\s+)?{_SCORES}"
    rf"|\b{_SCORES}\s+(?:are|is|get|gets)\s+averaged\b|\baveraged\s+{_SCORES}"
    r"|\baverag(?:e|ing)\s+(?:is|are)\s+(?:used|applied|taken)\b", re.IGNORECASE)
_DENIED = re.compile(f"{SEQUENTIAL_JUDGES.pattern}|{NO_PARALLEL_JUDGES.pattern}|"
                     f"{NO_CONDITIONAL.pattern}|{NO_AVERAGING.pattern}|{NO_STRUCTURED.pattern}",
                     re.IGNORECASE)

# A plan, not a claim: an imperative item ("- High: Add conditional edges for node failure",
# "Fix: wire the router") or the work a report lists as remaining ("The remaining work ...
# includes conditional error edges").
_PLAN_ITEM = re.compile(
    r"^\W*(?:(?:high|medium|low|critical|priority\s*\d|p\d|fix|todo|next(?:\s+steps?)?)"
    r"\s*[:\u2013-]\s*)?(?:add|implement|introduce|create|wire|build|enable|replace|"
    r"refactor|migrate|switch)\s|\bremaining (?:work|tasks?|gaps?)\b|\bwork remaining\b",
    re.IGNORECASE)
# Work the sentence puts in the future ("Conditional Edges (Future Enhancement):", "the final
# phase, where judicial fan-out ... will be layered on top", "prepares the architecture for
# true fan-out/fan-in ... in later phases"): a plan, whatever it names; a sentence that only
# leaves other gaps "as future work" still describes what it names.
_FUTURE_WORK = re.compile(
    rf"{PLANNED.pattern}|\bfuture\s+enhancements?\b"
    r"|\bwill\s+(?:then\s+|later\s+)?be\s+(?:\w+ly\s+)?(?:layered|added|"
    r"implemented|introduced|wired|built|integrated|developed|enabled)\b"
    r"|\b(?:in|for|during)\s+(?:the\s+|a\s+)?(?:later|future|next|subsequent|upcoming|coming)\s+"
    r"(?:phases?|stages?|iterations?|versions?|releases?|milestones?|sprints?)\b"
    r"|\b(?:lays?|laying)\s+(?:the\s+)?(?:groundwork|foundations?)\s+for\b"
    r"|\bpav(?:es?|ing)\s+the\s+way\s+for\b", re.IGNORECASE)
# A sentence in the future tense or calling its subject planned ("These judges will run in
# parallel", "Fan-out/fan-in planned for Detectives") is a plan, unless it tells what is
# built now as well (then only the features it calls planned are: `qualifiers.as_shortfall`).
_WILL = re.compile(r"\b(?:will|shall|planned|going\s+to)\b", re.IGNORECASE)
_NOW = re.compile(r"\b(?:current(?:ly)?|now|already|implemented|completed?|existing|built)\b",
                  re.IGNORECASE)

# What holds of a kind of system, not of this one ("In a fan-out/fan-in graph architecture,
# multiple nodes execute concurrently and write to shared state"): a sentence opened by "in
# a <kind of system>," that does not name the authors' own ("our", "this system").
_IN_GENERAL = re.compile(
    r"^\W*in\s+(?:a|an|any|every|such\s+an?)\s+[^,]{0,60}?\b(?:architectures?|graphs?|"
    r"systems?|patterns?|designs?|setups?|workflows?|topolog(?:y|ies)|pipelines?)\s*,"
    r"(?!.*\b(?:our|we|my|this\s+(?:system|auditor|graph|project|design))\b)",
    re.IGNORECASE | re.DOTALL)


def extract_feature_claims(passages: Iterable[tuple[int | None, str]],
                           sentence_splitter: re.Pattern[str] | None = None,
                           per_feature: int = 3) -> list[FeatureClaim]:
    """Affirmative sentences claiming a checkable feature (parallel judges or detectives,
    a fan-in, conditional routing), at most `per_feature` per feature, in document order."""
    splitter = sentence_splitter or SENTENCE_SPLIT
    claims: list[FeatureClaim] = []
    counts: dict[str, int] = {}
    for page, text in passages:
        for sentence in splitter.split(text):
            if _NEGATION.search(sentence) or _DENIED.search(sentence) or \
                    _PLAN_ITEM.search(sentence) or _IN_GENERAL.search(sentence) or \
                    _FUTURE_WORK.search(sentence) or (_WILL.search(sentence)
                                                      and not _NOW.search(sentence)):
                continue
            for feature, (subject, claim) in FEATURES.items():
                named = re.search(subject, sentence, re.IGNORECASE)
                if counts.get(feature, 0) >= per_feature or not named or not re.search(
                        claim, sentence, re.IGNORECASE) or as_shortfall(sentence, *named.span()):
                    continue  # "weaknesses such as limited conditional edges" claims none
                counts[feature] = counts.get(feature, 0) + 1
                claims.append(FeatureClaim(feature=feature, page=page,
                                           sentence=" ".join(sentence.split())[:400]))
    return claims


# --- statements checked against the code's facts (forensics.contradictions) -------------------
# A sentence that names a reducer: which state field it merges is read against the code.
_REDUCER = re.compile(r"\boperator\.[a-z_]+\b|\badd_messages\b|\breducers?\b", re.IGNORECASE)
# A sentence that says what is (not) implemented: "only the detective layer is implemented"
# (`named`: what it says is the only part built), "the judges are not yet implemented".
ONLY_IMPLEMENTED = re.compile(
    r"\bonly\s+(?:the\s+)?(?P<named>[\w\s/-]{1,40}?)\s+(?:is|are|has\s+been|have\s+been)\s+"
    r"(?:implemented|built|wired|functional|working)\b", re.IGNORECASE)
NOT_IMPLEMENTED = re.compile(
    r"\b(?:is|are)\s+not\s+(?:yet\s+)?(?:implemented|built|wired)\b"
    r"|\b(?:has|have)\s+not\s+(?:yet\s+)?been\s+(?:implemented|built|wired)\b"
    r"|\b(?:remains?|is|are)\s+unimplemented\b", re.IGNORECASE)
_STATUS = re.compile(f"{ONLY_IMPLEMENTED.pattern}|{NOT_IMPLEMENTED.pattern}", re.IGNORECASE)
# Text of a template the author never filled in.
_PLACEHOLDER = re.compile(
    r"[(\[]\s*(?:insert|add|paste|place|put)\s+[\w\s-]{0,40}?\bhere\s*[)\]]"
    r"|\b(?:insert|paste|place|put)\s+your\s+[\w\s-]{0,40}?\bhere\b"
    r"|\[\s*(?:TODO|TBD|placeholder|insert[^\]]{0,40})\s*\]"
    r"|\blorem\s+ipsum\b|<\s*(?:placeholder|your[\w\s-]{0,30})\s*>", re.IGNORECASE)
# "src/tools/repo_tools.py uses tempfile.TemporaryDirectory()": a file of the repository said
# to call a module's function (`path`, `api`). Text extraction may break a name at a space
# ("repo_tools .py", "tempfile.Temporary Directory()"): both are read joined.
API_USE = re.compile(
    r"(?P<path>[\w/-]+)\s?\.py\b(?P<between>[^.;:]{0,80}?\b(?i:uses?|using|calls?|"
    r"invokes?|employs?|relies\s+on|leverages?|wraps?|creates?|instantiates?)\b[^;:]{0,60}?)"
    r"(?<![\w.])(?P<api>[a-z_][a-z0-9_]*\.[A-Za-z_]\w*(?:\s[A-Z][a-z]\w*)?)\s?\(")
# A module's function said to be used, no file named ("tempfile.TemporaryDirectory is used to
# clone", "clones with tempfile.mkdtemp()"): when the code uses that module, some file must
# call it (`forensics.usage.module_misquotes`).
_DOTTED = r"(?<![\w./])[a-z_][a-z0-9_]*\.[A-Za-z_]\w*(?![\w/]|\.\w)"
MODULE_API = re.compile(
    r"\b(?i:uses?|using|utili[sz](?:es?|ing)|employs?|employing|leverages?|leveraging|via|"
    r"through|with|relies\s+on|built\s+on|(?:made|created)\s+(?:by|with))"
    rf"\b[^.;:]{{0,40}}?(?P<api>{_DOTTED})|(?P<api2>{_DOTTED})(?:\(\))?\s+(?i:is|are)\s+used\b")
# Code the report quotes that builds an object of a named class with keyword arguments
# ("llm = ChatOpenAI(model=\"gpt-4o\", temperature=0)"): the class must exist in the code.
QUOTED_CALL = re.compile(
    r"\b[a-z_]\w*\s?=\s?(?P<callee>[A-Z][a-z0-9]+[A-Z]\w*)\((?=[^()]{0,120}?\b[a-z_]\w*\s?=)")
# A LangChain chat model class the report says the system runs on ("gpt-4o via ChatOpenAI",
# "the judges use ChatAnthropic"): the code must build that class, not another.
CHAT_CLASS = re.compile(r"\b(?:via|uses?|using|with|through|built\s+on|backed\s+by|runs?\s+on|"
                        r"calls?|powered\s+by)\b[^.;]{0,40}?\b(?P<callee>Chat[A-Z][A-Za-z]+)\b")
# The syntax tree said to be walked by a visitor ("A visitor pattern is employed to traverse
# the AST", "Implements ast.NodeVisitor for depth-first search"): the code must define one.
AST_VISITOR = re.compile(r"\b(?:visitor\s+pattern|(?:ast\.)?Node(?:Visitor|Transformer)|"
                         r"AST\s+visitors?)\b", re.IGNORECASE)
# A method the report says the code calls ("every judge node uses .with_structured_output()"):
# a snake_case name written as a call, so ordinary words are never read as one.
METHOD_USE = re.compile(r"\b(?i:uses?|using|calls?|calling|invokes?|via|through|wraps?|"
                        r"(?:enforced|bound|built)\s+(?:by|with))\b[^.;:]{0,60}?(?<![\w.])"
                        r"\.?(?P<callee>[a-z][a-z0-9]*_[a-z0-9_]+)\s?\(\)")
# Words the report quotes as a persona's prompt: "a “Zero Tolerance” prompt", "its prompt:
# “You are ...”", "instructed to “flag every gap”" (`q`), in a sentence naming a persona.
_QUOTE = r"[\"\u201c](?P<q>[^\"\u201c\u201d]{3,300}?)[\"\u201d]"
PERSONA = re.compile(r"\b(?:prosecutors?|defen[cs]e|tech\s?leads?|judges?)\b", re.IGNORECASE)
# The quote names the prompt ("a “Zero Tolerance” prompt": a lower-case noun right after it,
# so a next sentence's "Persona ..." is not it), or follows it within three words ("its
# prompt reads: “...”"), never further ("prompts 70% similar → risk of “Persona Collusion”").
PROMPT_QUOTE = re.compile(
    _QUOTE + r"\s*(?-i:(?:system\s+)?(?:prompts?|instructions?|directives?|persona))\b"
    r"|\b(?:prompts?|instructions?|system\s+message|persona|instruct(?:s|ed)(?:\s+it)?\s+to)"
    r"\b(?:\s+[\w'\u2019]+){0,3}?\s*[:,]?\s*" + _QUOTE.replace("?P<q>", "?P<q2>"),
    re.IGNORECASE)
# A persona's prompt said to send it after security flaws ("Its prompt instructs it to look
# for missing pieces, security flaws ..."): read against the prompt the code sends.
PROMPT_SECURITY = re.compile(r"\b(?:prompt\w*|instruct\w*|system\s+message)\b[^.;]{0,120}?"
                             r"\b(?:secur\w*|vulnerab\w*)", re.IGNORECASE)
STATEMENTS = {"reducer_binding": (_REDUCER, 24), "implementation_status": (_STATUS, 6),
              "placeholder": (_PLACEHOLDER, 6), "feature_denied": (_DENIED, 6),
              "api_use": (API_USE, 6), "quoted_call": (QUOTED_CALL, 6),
              "chat_class": (CHAT_CLASS, 6), "method_use": (METHOD_USE, 6),
              "library_use": (LIBRARY_USE, 6), "module_api": (MODULE_API, 6),
              "ast_visitor": (AST_VISITOR, 3), "tests_claim": (TESTS_CLAIM, 3),
              "manager_claim": (MANAGER_CLAIM, 3), "fact_supremacy": (FACT_SUPREMACY, 6),
              "prompt_quote": (PROMPT_QUOTE, 6),
              "prompt_security": (PROMPT_SECURITY, 6), "node_disabled": (DISABLED_NODE, 6),
              "component_gap": (NO_COMPONENT, 6), "node_not_started": (NOT_STARTED, 6),
              "node_works": (NODE_WORKS, 24), "node_admitted": (NODE_ADMITTED, 24)}
# What a report says is or is not built is read in every section (a gaps list, a plan that
# says what is missing); what it says the code calls, quotes or binds is read outside
# future-work sections only ("Proposed Fix: llm = ChatAnthropic(model=...)" is code to write).
IN_PLANS = {kind: STATEMENTS[kind] for kind in (
    "implementation_status", "placeholder", "feature_denied", "node_disabled", "component_gap",
    "node_not_started", "node_works", "node_admitted")}
OUTSIDE_PLANS = {kind: value for kind, value in STATEMENTS.items() if kind not in IN_PLANS}
# Kinds whose sentence must name a judge ("the system's “Forensic Expert” persona" is no
# judge's prompt); a claim of what a prompt asks for that names none ("Its prompt ...") is
# read with the sentence before it when that one names a judge.
_ABOUT_PERSONA = {"prompt_quote": False, "prompt_security": True}


def extract_statements(passages: Iterable[tuple[int | None, str]],
                       sentence_splitter: re.Pattern[str] | None = None,
                       kinds: dict[str, tuple[re.Pattern[str], int]] | None = None,
                       plans: re.Pattern[str] | None = None,
                       context: Callable[[int], tuple[str, str]] | None = None
                       ) -> list[FeatureClaim]:
    """Sentences the code's facts can contradict, as `FeatureClaim`s of the kinds in
    `STATEMENTS` (a reducer bound to a state field, what is or is not implemented, an
    unfilled template placeholder, a feature said to be absent, a module function a file
    is said to call, a class quoted code builds), a few per kind, in
    document order. Negations are kept: "X is not implemented" is the claim. `kinds`: other
    patterns to read instead (`BEHAVIOURS`, read from prose only); `plans`: sentences that
    say the work is planned ("... will be enforced via ...") are skipped; `context`: the
    lead-in and the text around the passage at an index (`qualifiers`), kept on its claims."""
    splitter = sentence_splitter or SENTENCE_SPLIT
    found: list[FeatureClaim] = []
    counts: dict[str, int] = {}
    for at, (page, text) in enumerate(passages):
        previous = ""
        for sentence in splitter.split(text):
            if plans is not None and plans.search(sentence):
                previous = sentence
                continue
            for kind, (pattern, most) in (kinds or STATEMENTS).items():
                if counts.get(kind, 0) >= most or not pattern.search(sentence):
                    continue
                said = _about_persona(previous if _ABOUT_PERSONA[kind] else "", sentence) \
                    if kind in _ABOUT_PERSONA else sentence
                if said:
                    counts[kind] = counts.get(kind, 0) + 1
                    lead, near = context(at) if context else ("", "")
                    found.append(FeatureClaim(feature=kind, page=page, lead=lead, near=near,
                                              sentence=_window(said, pattern)))
            previous = sentence
    return found


def _window(said: str, pattern: re.Pattern[str], size: int = 400) -> str:
    """The sentence kept for a claim: its first `size` characters, or for a long one whose
    match lies further on (a code listing run together: "... # Git sandboxing works (tested
    with public repo) $ python -c ..."), the `size` characters around the match, so the
    checks that read the claim again still find what it says."""
    text = " ".join(said.split())
    match = pattern.search(text)
    if match is None or match.end() <= size:
        return text[:size]
    start = max(0, min(match.start() - size // 4, len(text) - size))
    if text[start - 1] != " ":  # from a word's start (start > 0: the text is longer)
        start = text.find(" ", start, match.start()) + 1 or start
    return text[start:start + size]


def _about_persona(previous: str, sentence: str) -> str | None:
    """The sentence when it names a judge; else the previous one and it when the previous
    names one (the judge "Its prompt ..." refers to); else None."""
    if PERSONA.search(sentence):
        return sentence
    if PERSONA.search(previous) and len(previous) < 300:
        return f"{previous} {sentence}"
    return None

