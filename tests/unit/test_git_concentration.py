"""How concentrated the code's arrival is, graded: histories built with set commit dates,
measured by the git detective and judged offline (rubric: "bulk upload of all code at once",
"timestamps clustered within minutes" vs "atomic, step-by-step history")."""

from __future__ import annotations

from pathlib import Path

from automaton_auditor.forensics.git.acquire import GitLimits, acquire, git_findings, parse_target
from automaton_auditor.forensics.git.concentration import bulk_goes, concentration_finding
from automaton_auditor.forensics.git.history import Commit
from automaton_auditor.judging.offline import offline_opinion
from automaton_auditor.judging.rules import decide
from automaton_auditor.rubric import load_rubric
from automaton_auditor.state import JUDGES, CriterionResult, Evidence, Finding
from tests.unit.test_git_narrative import BASE, git

RUBRIC = load_rubric()
GIT = RUBRIC.dimension("git_forensic_analysis")
HOUR, DAY = 3600, 86_400
STAGES = ["state", "tools/repo_tools", "tools/doc_tools", "nodes/detectives", "graph",
          "nodes/judges", "nodes/justice", "report"]


def code(lines: int, tag: str = "x") -> str:
    return "".join(f"{tag}_{i} = {i}\n" for i in range(lines))


def build(root: Path, commits: list[tuple[int, str, dict[str, str]]]) -> Path:
    """A repository whose commits (author/committer time, message, files written) come in
    the given order; a setup commit an hour before the first."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "chore: project setup with uv", when=BASE - HOUR)
    for when, message, files in commits:
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", message, when=when)
    return root


def findings(tmp_path: Path, commits: list[tuple[int, str, dict[str, str]]]) -> list[Finding]:
    return audited(build(tmp_path / "target", commits), tmp_path / "work")


def audited(repo: Path, work: Path) -> list[Finding]:
    """The git detective's findings on the repository at `repo`."""
    limits = GitLimits()
    return git_findings(acquire(parse_target(str(repo), limits), work, limits).path, limits)


def facet(found: list[Finding], name: str) -> Finding:
    return next(f for f in found if f.facet == name)


def judged(found: list[Finding]) -> CriterionResult:
    """The offline bench's ruling on git forensics from the detective's own findings."""
    dossier = [Evidence(**f.model_dump(), source="repo", dimension=GIT.id) for f in found]
    return decide(GIT, [offline_opinion(j, GIT, dossier) for j in JUDGES], dossier, RUBRIC)


def stepwise(per_commit: int = 60) -> list[tuple[int, str, dict[str, str]]]:
    """One stage a commit, hours apart over two days, `per_commit` lines each."""
    return [(BASE + i * 5 * HOUR, f"feat: implement {stage}",
             {f"src/{stage}.py": code(per_commit)}) for i, stage in enumerate(STAGES)]


def test_an_atomic_history_keeps_full_marks(tmp_path: Path) -> None:
    found = findings(tmp_path, stepwise())
    fact = facet(found, "git.concentration")
    assert fact.found is False and fact.data["cap"] is None
    assert fact.data["two_largest_share"] == 0.25 and fact.data["commits_with_code"] == 8
    assert judged(found).final_score == 5


# Two "goes": each brings 400 lines over four components at once (four build stages).
GOES = {3: ["nodes/detectives", "models/evidence", "workflow/wiring", "nodes/judge_prompts"],
        6: ["nodes/justice", "nodes/judge_rules", "tools/report_tools", "models/verdict"]}


def two_goes(first: int = 100) -> list[tuple[int, str, dict[str, str]]]:
    """`stepwise`, but two of its eight commits each bring several components at once (four
    files): `first` lines a file in the first go, 100 in the second (800 of 1,160 lines in
    two goes by default)."""
    history = stepwise()
    for index, parts in GOES.items():
        when, message, _files = history[index]
        lines = first if index == 3 else 100
        history[index] = (when, message, {f"src/{part}.py": code(lines, part.replace("/", "_"))
                                          for part in parts})
    return history


def test_two_large_steps_hours_apart_cost_full_marks_only(tmp_path: Path) -> None:
    # Eight stage commits hours apart, two of them goes of 400 lines (800 of 1,160), neither
    # over half of the code nor among commits minutes apart: large steps of an iterative
    # history (not atomic: no full marks), not an upload in two goes.
    found = findings(tmp_path, two_goes())
    assert facet(found, "git.bulk_upload").found is False  # 2 of 8 files each: no upload
    assert facet(found, "git.commit_bursts").found is False
    fact = facet(found, "git.concentration")
    assert fact.found and fact.data["cap"] == 4 and fact.data["total_lines"] == 1160
    assert fact.data["two_largest_share"] == round(800 / 1160, 3)
    assert fact.data["commits_for_80"] == 5  # 400 + 400 + 60 + 60 + 60 >= 80%
    assert fact.data["largest_goes"] == [True, True]
    assert fact.data["largest_in_run"] == [False, False] and fact.data["writer"] is None
    assert fact.rationale.startswith("Built in a few large steps (no better than 4)")
    # the rationale quotes the two commits: hash, date and lines
    assert "feat: implement nodes/detectives (+400)" in fact.rationale
    assert "feat: implement nodes/justice (+400)" in (fact.content or "")
    assert judged(found).final_score == 4


def test_two_goes_one_dominant_score_in_the_middle(tmp_path: Path) -> None:
    # As above, but the first go brings 800 lines: over half of the 1,560 (a dominant
    # commit), so the two goes are an upload: part failure pattern, part iteration.
    found = findings(tmp_path, two_goes(200))
    assert facet(found, "git.bulk_upload").found is False
    fact = facet(found, "git.concentration")
    assert fact.found and fact.data["cap"] == 3
    assert fact.data["largest_share"] == round(800 / 1560, 3)
    assert fact.rationale.startswith("Concentrated (no better than 3)")
    result = judged(found)
    assert (result.final_score, result.deciding_rule) == (3, "failure_pattern_cap")
    assert result.verdict_cap is None  # a moderate concentration is no integrity failure


def test_two_goes_among_commits_minutes_apart_score_in_the_middle(tmp_path: Path) -> None:
    # The 400-line goes of the first test, but the first lands two minutes after the commit
    # before it and two before the one after (520 of 1,160 lines in that run: no burst).
    history = two_goes()
    at = history[3][0]
    for index, when in ((2, at - 120), (4, at + 120)):
        _when, message, files = history[index]
        history[index] = (when, message, files)
    found = findings(tmp_path, history)
    assert facet(found, "git.commit_bursts").found is False
    fact = facet(found, "git.concentration")
    assert fact.found and fact.data["cap"] == 3
    assert fact.data["largest_in_run"] == [True, False]


def test_two_large_commits_that_each_build_one_component_are_steps(tmp_path: Path) -> None:
    # The same 800 of 1,160 lines, but each large commit builds one file of one stage: a
    # small project's steps (setup, state, tools, detectives, graph ... one a commit).
    history = stepwise()
    for index in (3, 6):
        when, message, files = history[index]
        history[index] = (when, message, {path: code(400) for path in files})
    fact = facet(findings(tmp_path, history), "git.concentration")
    assert fact.data["two_largest_share"] == round(800 / 1160, 3)
    assert fact.data["largest_goes"] == [False, False]
    assert not fact.found and fact.data["cap"] is None
    assert "each builds one component" in fact.rationale


def test_an_upload_in_two_goes_with_scripted_steps_is_the_failure_pattern(
        tmp_path: Path) -> None:
    # As above (two goes bring 800 of 1,160 lines), but three of the small stage commits
    # land one second apart: a script committed the step-by-step story.
    history = two_goes()
    for offset, index in enumerate((0, 1, 2)):
        _when, message, files = history[index]
        history[index] = (BASE + offset, message, files)
    found = findings(tmp_path, history)
    fact = facet(found, "git.concentration")
    assert fact.found and fact.data["cap"] == 2 and fact.data["scripted_commits"] == 3
    assert "3 commits land each within 2 s" in fact.rationale
    assert "feat: implement tools/repo_tools" in (fact.content or "")  # a scripted step
    result = judged(found)
    assert (result.final_score, result.deciding_rule) == (2, "failure_pattern_cap")
    # the same scripted steps around code that arrives spread out cost nothing here
    spread = stepwise()
    for offset, index in enumerate((0, 1, 2)):
        _when, message, files = spread[index]
        spread[index] = (BASE + offset, message, files)
    assert facet(findings(tmp_path / "spread", spread), "git.concentration").data["cap"] is None


def test_a_third_of_the_code_in_one_sitting_costs_full_marks(tmp_path: Path) -> None:
    # Eight stage commits hours apart (60 lines each), then five commits a minute apart
    # bringing 70 lines each: 350 of 830 lines (42%) in one run of four minutes.
    history = stepwise()
    start = BASE + 3 * DAY
    history += [(start + i * 60, f"feat: extra part {i}", {f"src/extra_{i}.py": code(70)})
                for i in range(5)]
    found = findings(tmp_path, history)
    assert facet(found, "git.commit_bursts").found is False  # under half: no burst
    fact = facet(found, "git.concentration")
    assert fact.found and fact.data["cap"] == 4
    assert fact.data["run_commits"] == 5 and fact.data["run_seconds"] == 240
    assert fact.data["run_share"] == round(350 / 830, 3) and fact.data["run_lines"] == 350
    assert "5 commits in 4 minutes" in fact.rationale
    assert (fact.content or "").splitlines()[0].endswith("feat: extra part 0 (+70)")
    assert judged(found).final_score == 4


def batches(gap: int) -> list[tuple[int, str, dict[str, str]]]:
    """Eight stage commits hours apart (60 lines each), then two batches on later days of
    three commits `gap` seconds apart, 110 lines each: 660 of 1,140 lines (58%), each batch
    330 (29%, under the one-run third), no two commits half."""
    history = stepwise()
    for day in (3, 5):
        history += [(BASE + day * DAY + i * gap, f"feat: part {day}.{i}",
                     {f"src/part_{day}_{i}.py": code(110)}) for i in range(3)]
    return history


def test_batches_committed_seconds_apart_cost_full_marks(tmp_path: Path) -> None:
    found = findings(tmp_path, batches(20))
    fact = facet(found, "git.concentration")
    assert fact.data["run_share"] == round(330 / 1140, 3)  # no one run brings a third
    assert fact.found and fact.data["cap"] == 4
    assert fact.data["batch_share"] == round(660 / 1140, 3) and fact.data["batch_lines"] == 660
    assert [(b["commits"], b["seconds"], b["lines"]) for b in fact.data["batches"]] == \
        [(3, 40, 330), (3, 40, 330)]
    assert fact.rationale.startswith("Committed in batches (no better than 4): 2 batches")
    assert len((fact.content or "").splitlines()) == 6
    assert "feat: part 5.2 (+110)" in (fact.content or "")
    assert judged(found).final_score == 4
    # The same commits a whole minute apart are no batch (someone may write and commit a
    # step a minute): the history keeps full marks.
    fact = facet(findings(tmp_path / "minutes", batches(60)), "git.concentration")
    assert fact.data["batches"] == [] and fact.data["cap"] is None


def test_a_small_project_in_few_commits_is_no_bulk(tmp_path: Path) -> None:
    # Two of eight commits bring 2 x 100 of 260 lines (77%), but 200 lines is no bulk.
    history = stepwise(10)
    for index in (3, 6):
        when, message, files = history[index]
        history[index] = (when, message, {path: code(100) for path in files})
    fact = facet(findings(tmp_path, history), "git.concentration")
    assert fact.data["two_largest_share"] == round(200 / 260, 3)
    # neither a bulk nor spread out: the text says which (it had read "Spread: ... 77%")
    assert fact.found is False and fact.data["cap"] is None
    assert fact.rationale.startswith("Concentrated but small (no cap): the two commits")
    assert "under the 300 lines of a bulk upload" in fact.rationale


def test_moving_or_reindenting_the_code_adds_no_line(tmp_path: Path) -> None:
    # After eight 60-line steps, one commit moves every module into a package (its first
    # line rewritten) and another re-indents every line: the first writes eight lines, the
    # second none, so the eight steps still carry the code.
    tags = {stage: stage.replace("/", "_") for stage in STAGES}
    repo = build(tmp_path / "target", [(when, message, {path: code(60, tags[stage])})
                                       for stage, (when, message, files)
                                       in zip(STAGES, stepwise(), strict=True)
                                       for path in files])
    (repo / "pkg").mkdir()
    for stage, tag in tags.items():
        git(repo, "mv", f"src/{stage}.py", f"pkg/{tag}.py")
        moved = repo / "pkg" / f"{tag}.py"
        moved.write_text("import os\n" + moved.read_text().split("\n", 1)[1])
    git(repo, "commit", "-q", "-am", "refactor: move the modules into a package",
        when=BASE + 3 * DAY)
    for moved in (repo / "pkg").iterdir():
        moved.write_text("".join(f"\t{line}\n" for line in moved.read_text().splitlines()))
    git(repo, "commit", "-q", "-am", "style: indent with tabs", when=BASE + 4 * DAY)
    fact = facet(audited(repo, tmp_path / "work"), "git.concentration")
    assert fact.found is False and fact.data["total_lines"] == 488
    assert fact.data["largest"][0]["lines"] == 60 and fact.data["commits_with_code"] == 9


def test_a_rewrite_counts_for_the_lines_it_writes(tmp_path: Path) -> None:
    # Eight 60-line steps, then one commit rewrites five of the modules (300 lines added,
    # 300 removed): it grows the code by nothing, yet it writes more than any step. It is
    # one of the two largest commits, which add 360 of the 780 lines the history adds.
    history = stepwise()
    history.append((BASE + 3 * DAY, "rewrite the detectives and judges",
                    {f"src/{stage}.py": code(60, "y") for stage in STAGES[:5]}))
    fact = facet(findings(tmp_path, history), "git.concentration")
    assert fact.data["total_lines"] == 780
    assert fact.data["largest"][0]["lines"] == 300
    assert fact.data["two_largest_share"] == round(360 / 780, 3)
    assert "rewrite the detectives and judges (+300)" in fact.rationale
    assert "write 46% of the 780 code lines the history's commits write" in fact.rationale


def test_the_strong_patterns_still_cap_at_two(tmp_path: Path) -> None:
    # All the code in one commit: the graded fact agrees (3), the bulk upload caps at 2.
    upload = [(BASE, "Add files via upload",
               {f"src/{stage}.py": code(60) for stage in STAGES})]
    found = findings(tmp_path / "a", upload)
    assert facet(found, "git.concentration").data["cap"] == 3
    result = judged(found)
    assert result.final_score <= 2 and "bulk upload" in (result.verdict_cap or "")
    # Eight commits a minute apart bring all the code: a burst, capped at 2.
    burst = [(BASE + i * 60, message, files) for i, (_w, message, files)
             in enumerate(stepwise())]
    found = findings(tmp_path / "b", burst)
    assert facet(found, "git.commit_bursts").found
    assert judged(found).final_score == 2


def test_a_shallow_history_is_not_judged(tmp_path: Path) -> None:
    repo = build(tmp_path / "target", stepwise())
    limits = GitLimits(depth=3)
    checkout = acquire(parse_target(str(repo), limits), tmp_path / "work", limits)
    fact = facet(git_findings(checkout.path, limits), "git.concentration")
    assert fact.found is False and fact.data == {"judged": False, "cap": None}
    assert fact.rationale == "Not judged: the history is shallow."


def test_a_commit_writing_most_of_todays_code_is_a_go(tmp_path: Path) -> None:
    # Four stage commits of 60 lines, a 200-line template, then one commit that rewrites the
    # template (300 lines) and adds the state (150): it touches one stage and adds one code
    # file, yet writes 450 of the 690 lines present today: the components at once.
    history = stepwise()[:4]
    history.insert(0, (BASE - HOUR // 2, "agent template", {"src/agent.py": code(200, "t")}))
    history.append((BASE + 2 * DAY, "implement the auditor",
                    {"src/agent.py": code(300, "a"), "src/models.py": code(150, "m")}))
    found = findings(tmp_path, history)
    fact = facet(found, "git.concentration")
    # it adds 450 lines and the template 200, of the 890 the history adds
    assert fact.data["two_largest_share"] == round(650 / 890, 3)
    assert fact.found and fact.data["cap"] == 3
    assert fact.data["largest_goes"][0] is True
    assert fact.data["writer_share"] == round(450 / 690, 3)
    assert "wrote 65% of the code lines present today" in fact.rationale


def test_a_commit_adding_most_code_files_makes_the_goes_a_bulk() -> None:
    # Two goes of under half the code lines each, hours apart: large steps, unless one of
    # them added most of today's code files (the bulk-upload fact), as a dominant commit.
    facts = {"largest_share": 0.4, "writer": None, "uploaded": False,
             "largest_in_run": [False, False]}
    assert not bulk_goes(facts)
    assert bulk_goes({**facts, "uploaded": True})
    assert bulk_goes({**facts, "largest_share": 0.51})


def test_an_upload_with_small_edits_after_it_is_one_go() -> None:
    # One commit adds 900 of the 973 code lines; a 3-line fix is no commit that adds code,
    # a 40-line and a 30-line edit are the only steps: uploaded in one go, not two.
    upload = Commit("a" * 40, BASE, "d1", "Initial commit", written=900, lines=900,
                    added=[f"src/{stage}.py" for stage in STAGES])
    edits = [Commit(sha * 40, BASE + i * DAY, f"d{i}", f"edit {i}", written=size, lines=0,
                    changed=["src/graph.py"])
             for i, (sha, size) in enumerate((("b", 3), ("c", 40), ("d", 30)), start=1)]
    fact = concentration_finding([upload, *edits])
    assert fact.data["commits_with_code"] == 3 and fact.data["cap"] == 2
    assert fact.rationale.startswith("Uploaded in one go (no better than 2)")
    assert "only 1 other commit(s) add code" in fact.rationale
