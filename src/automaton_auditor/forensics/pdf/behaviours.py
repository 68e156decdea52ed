"""How the built system is said to behave, read from a report's prose only (never a
future-work section): the sentence patterns `forensics.behaviour_claims` reads against the
code's facts (a retried reply, a conditional gate, weighed judges, a removed clone, a
schema-bound model call, a sandboxed clone, nodes' output merged by a reducer, a score capped
when a check finds something)."""

from __future__ import annotations

import re

# A judge's reply retried when it fails or is malformed ("triggers a “Validation Retry”
# loop", "retries up to 3 times on a ValidationError"): a sentence about model replies.
RETRY = re.compile(r"^(?=.*?\b(?:outputs?|responses?|repl(?:y|ies)|validat\w*|pars\w*|"
                   r"malformed|schemas?|json|llms?|models?|judges?)\b)"
                   r".*?\bretr(?:y|ies|ied|ying)\b", re.IGNORECASE | re.DOTALL)
# A node said to keep later nodes from running on a condition ("a gatekeeper that prevents
# the Judges from firing if the Evidence is malformed", "routes to the judges only if ...",
# "otherwise skips"): routing that needs a conditional edge. "Does not start until all
# data is collected" is a fan-in, not a gate.
GATE = re.compile(
    r"\b(?:prevents?|blocks?|stops?|halts?|keeps?)\s+(?:the\s+)?(?:[\w-]+\s+){0,3}?from\s+"
    r"(?:firing|running|executing|proceeding|starting|being\s+(?:invoked|called|run))\b"
    r"(?=[^.;]{0,40}?\b(?:if|when|whenever|unless)\b)"
    r"|\broutes?\s+(?:[\w-]+\s+){0,3}?to\s+[\w-]+\s+(?:only\s+)?(?:if|when|unless)\b"
    r"|\botherwise\s+(?:it\s+)?(?:skips?|routes?|jumps?|goes)\b"
    r"|\b(?:routes?|loops?|goes|sends?\s+\w+)\s+back\s+(?:for|to)\b", re.IGNORECASE)
# The judges' scores said to be weighed ("performs Weighted Reconciliation", "a weighted
# average where the Tech Lead holds 50% of the weight", "the Tech Lead's score carries
# double weight"), never a criterion's weight in an overall score.
_WHO = r"(?:judges?|personas?|prosecutor|defen[cs]e|tech\s?lead|opinions?)"
WEIGHED = re.compile(
    r"\bweighted\s+(?:average|mean|sum|scor\w*|reconciliation|synthesis|rubric|vot\w*|"
    r"combination|aggregat\w*|consensus|verdict|\d)"
    rf"|\b{_WHO}(?:['\u2019]s?)?\s+(?:\w+\s+){{0,2}}?(?:carr(?:y|ies)|has|have|gets?|receives?|"
    r"holds?|given|assigned)\s+(?:\w+\s+){0,3}?weights?\b"
    rf"|\bweights?\s+(?:the\s+|each\s+)?{_WHO}|\b{_WHO}\s+weights?\b"
    rf"|\bweight(?:ed|s|ing)?\s+(?:of|for|per|by|toward|towards)\s+(?:the\s+|each\s+)?{_WHO}",
    re.IGNORECASE)
# The cloned repository's temporary directory said to be removed after the audit ("each
# repository clone exists in a temporary path, purged after auditing", "the sandbox is
# deleted when the run ends").
_CLEAN_SUBJECT = (r"\b(?:clon\w*|repositor\w*|repos?|temp\w*|sandbox\w*|director\w*|"
                  r"workspaces?|checkouts?|disk)\b")
CLEANUP_SUBJECT = re.compile(_CLEAN_SUBJECT, re.IGNORECASE)
CLEANUP = re.compile(
    rf"^(?=.*?{_CLEAN_SUBJECT})"
    r".*?\b(?:purged|clean(?:ed|ing|s)?[\s-]up|deleted|removed|wiped|destroyed|discarded|"
    r"torn\s+down|(?:automatic(?:ally)?|auto)[\s-](?:deletion|removal|clean[\s-]?up)|"
    r"(?:purges?|deletes?|removes?|wipes?|destroys?|discards?)\s+(?:it|them|the\s+\w+))\b",
    re.IGNORECASE | re.DOTALL)
# The same said of nothing named, under a heading that names the clone ("3. Sandboxed Git
# Operations" ... "Cleanup: Automatic deletion on exit"): only a removal said to happen by
# itself or at the run's end, so another removal ("shell=True was removed") is not read.
CLEANUP_UNDER_HEADING = re.compile(
    rf"^(?!.*?{_CLEAN_SUBJECT}).*?(?:\b(?:automatic(?:ally)?|auto)[\s-](?:deleted|deletion|"
    r"removed|removal|clean(?:ed)?[\s-]?up)\b|\b(?:deleted|removed|purged|cleaned[\s-]up|wiped)"
    r"\s+(?:automatically\s+)?(?:on|at|after|when)\s+(?:the\s+)?(?:exit|completion|"
    r"shutdown|audit\w*|run\s+ends?)\b)", re.IGNORECASE | re.DOTALL)
# The judges' model calls said to be bound to a schema by LangChain's API, the judges named
# before the call ("All judge nodes use .with_structured_output() bound to the
# JudicialOpinion Pydantic schema"), never a file's name ("Modify src/nodes/judges.py to
# bind ... using .with_structured_output()") nor the call alone ("Original
# with_structured_output() failed with LM Studio"): the call the code holds or does not.
STRUCTURED = re.compile(r"(?<![/\w.])(?:judges?|judge\s+nodes?|personas?)(?![\w.])[^;:]{0,80}?"
                        r"\b(?:with_structured_output|bind_tools)\b", re.IGNORECASE)
# The clone said to run in a sandbox, a temporary directory ("Sandboxed git clone", "Git
# sandboxing works", "Clone and analyze repos in temporary directories using tempfile", "All
# git clone operations run inside tempfile.TemporaryDirectory()", "The repository cloning
# mechanism uses tempfile.TemporaryDirectory()"): a clone or a git operation
# named, never a node that only searches for tempfile ("RepoInvestigator searched for
# tempfile.TemporaryDirectory()").
_CLONING = r"(?:clon(?:e|es|ed|ing)|git\s+(?:operations?|commands?))"
SANDBOX = re.compile(
    r"\bsandbox(?:ed|ing)?\s+(?:git\b|clon\w*|repositor\w*|repos?\b|checkouts?)"
    r"|\b(?:git|clon\w*|repositor(?:y|ies))\s+(?:\w+\s+){0,2}?sandbox(?:ed|ing)?\b"
    rf"|\b{_CLONING}\b[^.;:]{{0,60}}?\b(?:in|into|inside|within|under|to|uses?|using|via)\s+"
    r"(?:(?:an?|the|each|its\s+own|isolated|ephemeral|fresh|unique|separate)\s+){0,3}"
    r"(?:temp(?:orary)?\s*(?:dir\w*|folders?|paths?|workspaces?|locations?)|tempfile\b|"
    r"sandbox\w*|(?:tempfile\.)?(?:TemporaryDirectory|mkdtemp)\b)", re.IGNORECASE)
# A node's output said to be merged into the state by a reducer ("Detectives produce
# Dict[str, List[Evidence]] merged via operator.ior", "reducers merge the parallel
# detectives' evidence"): read against what LangGraph keeps of the nodes' returns.
_MERGING = r"(?:merg\w*|combin\w*|accumulat\w*|concatenat\w*|append\w*)"
_REDUCING = (r"(?:operator\.(?:ior|or_|add|iadd|__or__|__add__)|add_messages|"
             r"(?:custom\s+|state\s+)?reducers?)")
MERGED = re.compile(
    rf"\b{_MERGING}\b[^.;:]{{0,60}}?\b(?:via|through|with|using|by)\s+(?:the\s+|an?\s+)?"
    rf"`?{_REDUCING}"
    rf"|(?<![\w.]){_REDUCING}\s+(?:reducers?\s+)?(?:\w+\s+){{0,1}}?{_MERGING}\b",
    re.IGNORECASE)
# A score said to be capped when a check finds something ("If the RepoInvestigator found
# os.system() ..., the score is capped at 3"): the cap and the finding that fires it in one
# clause, either way round; read against a cap the code's facts show inverted.
_CAPPED = (r"\b(?:capped|caps?|capping|ceiling|clamped|overrid(?:e|es|den|ing)|"
           r"limited\s+to)\b")
# within one clause: a dot inside a name ("os.system()") does not end it
_IN_CLAUSE = r"(?:[^.;:]|\.(?!\s))"
_FINDS = (rf"\b(?:if|when|whenever|once|upon)\b{_IN_CLAUSE}{{0,100}}?\b(?:finds?|found|"
          r"detect(?:s|ed)?|flag(?:s|ged)?|identif(?:y|ies|ied)|discover(?:s|ed)?|catch(?:es)?|"
          r"caught)\b")
OVERRIDE = re.compile(rf"{_FINDS}{_IN_CLAUSE}{{0,120}}?{_CAPPED}|{_CAPPED}{_IN_CLAUSE}{{0,120}}?"
                      rf"{_FINDS}", re.IGNORECASE)
BEHAVIOURS = {"retry_claim": (RETRY, 4), "gate_claim": (GATE, 4), "weight_claim": (WEIGHED, 4),
              "cleanup_claim": (CLEANUP, 4), "structured_claim": (STRUCTURED, 4),
              "sandbox_claim": (SANDBOX, 4), "override_claim": (OVERRIDE, 4)}
# Behaviours read from headings too: a flow the layout read as a heading ("Detectives produce
# Dict[str, List[Evidence]] merged via operator.ior -> EvidenceAggregator validates") states
# how the state is merged, as a reducer binding does (`claims.STATEMENTS`).
STATED_BEHAVIOURS = {"merge_claim": (MERGED, 4)}
# Behaviours read in a section whose heading names what they are said of (`CLEANUP_SUBJECT`).
HEADED_BEHAVIOURS = {"cleanup_claim": (CLEANUP_UNDER_HEADING, 4)}
