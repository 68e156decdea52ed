"""Real-world regression bench: audit labelled peer submissions and compare with the labels.

Each file in tests/realworld/peers/ labels one public submission of the challenge at a fixed
commit (direction per criterion, an overall grade, the report's cited paths). This script finds
the peer's bare git directory (a `fetch` mirror under ../.mirror beside the project, or
AUDITOR_PEERS_DIR), clones it at that commit into a temp dir, runs the auditor the way a user
does (the CLI, never its internals) and prints how far the verdicts agree with the labels.

    uv run python bench/realworld.py                 # every peer whose mirror is present
    uv run python bench/realworld.py -j 2 -k tedoaba # a subset, two audits at a time (max 2)
    uv run python bench/realworld.py --save out.json # also write the raw comparison

Peer code is only read by the auditor (parsed, never run). No peer file is copied into the project.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PEERS_DIR = ROOT / "tests" / "realworld" / "peers"
SECOND_READING = ROOT / "tests" / "realworld" / "second_reading.json"
MIRROR_ROOT = ROOT.parent / ".mirror"  # beside the project, as ../shared is
CORPUS_PDFS = ROOT.parent / "shared" / "corpus" / "pdfs"
CRITERIA = [
    "git_forensic_analysis",
    "state_management_rigor",
    "graph_orchestration",
    "safe_tool_engineering",
    "structured_output_enforcement",
    "judicial_nuance",
    "chief_justice_synthesis",
    "theoretical_depth",
    "report_accuracy",
    "swarm_visual",
]
SHORT = ["git", "state", "graph", "tools", "struct", "nuance", "chief", "theory", "acc", "visual"]
DEFAULT_TIMEOUT = 900


# --------------------------------------------------------------------------- labels


def label_name(peer: dict[str, Any]) -> str:
    """How a label is named: its repository, plus ``@<snapshot>`` for a labelled earlier
    snapshot of it (``@interim``: the commit that added the interim report, with that report)."""
    return peer["repo"] + (f"@{peer['snapshot']}" if peer.get("snapshot") else "")


def load_labels(only: list[str] | None = None) -> list[dict[str, Any]]:
    """Every labelled peer, sorted by file name; `only` keeps names containing any substring."""
    peers = []
    for path in sorted(PEERS_DIR.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        data["_label_file"] = path.name
        if only and not any(s.lower() in label_name(data).lower() for s in only):
            continue
        peers.append(data)
    return peers


def direction_holds(direction: str, score: float) -> bool:
    if direction == "high":
        return score >= 4
    if direction == "low":
        return score <= 2
    return 2 <= score <= 4  # mid


# --------------------------------------------------------------------------- mirrors


def _is_git_dir(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir()


def _roots() -> list[Path]:
    roots = []
    env = os.environ.get("AUDITOR_PEERS_DIR")
    if env:
        roots.append(Path(env))
    roots.append(MIRROR_ROOT)
    return roots


def find_git_dir(repo: str, commit: str) -> Path | None:
    """The bare (or non-bare) git dir of `repo` that holds `commit`, or None."""
    owner, name = repo.split("/", 1)
    for root in _roots():
        for dirname in (f"{owner}+{name}", f"{owner}__{name}", name):
            base = root / dirname
            if not base.is_dir():
                continue
            candidates = [base, base / ".git"]
            pattern = f"{glob.escape(str(base))}/**/HEAD"
            candidates += [Path(p).parent for p in glob.glob(pattern, recursive=True)]
            for cand in sorted(set(candidates), key=lambda p: len(str(p))):
                if _is_git_dir(cand) and _has_commit(cand, commit):
                    return cand
    return None


def _has_commit(git_dir: Path, commit: str) -> bool:
    res = subprocess.run(
        ["git", "--git-dir", str(git_dir), "cat-file", "-e", f"{commit}^{{commit}}"],
        capture_output=True,
        check=False,
    )
    return res.returncode == 0


def checkout(git_dir: Path, commit: str, dest: Path) -> None:
    """Clone `git_dir` into `dest` with full history and check out `commit` on a branch."""
    git = ["git", "-c", "core.hooksPath=/dev/null", "-c", "protocol.file.allow=always"]
    subprocess.run([*git, "clone", "-q", "--no-checkout", str(git_dir), str(dest)],
                   check=True, capture_output=True, timeout=300)
    subprocess.run([*git, "-C", str(dest), "checkout", "-q", "-B", "audited", commit],
                   check=True, capture_output=True, timeout=300)


def blank_pdf(path: Path) -> Path:
    """A one-page empty PDF for a peer that committed no report (doc criteria stay unlabelled)."""
    import pypdfium2 as pdfium  # a dependency of the project, not an auditor internal

    doc = pdfium.PdfDocument.new()
    doc.new_page(595, 842)
    doc.save(str(path))
    return path


# --------------------------------------------------------------------------- audit


@dataclass
class Outcome:
    repo: str
    grade: float
    status: str = "ok"  # ok | no-mirror | failed
    detail: str = ""
    exit_code: int | None = None
    seconds: float = 0.0
    overall: float | None = None
    scores: dict[str, int] = field(default_factory=dict)
    paths: dict[str, list[str]] = field(default_factory=dict)
    has_planned_key: bool = False


def _norm_path(p: Any) -> str:
    if isinstance(p, dict):
        p = p.get("path") or p.get("file") or ""
    s = str(p).strip().strip("`'\"")
    while s.startswith("./"):
        s = s[2:]
    head, sep, tail = s.rpartition(":")
    if sep and tail.isdigit():
        s = head
    return s


def audit_peer(peer: dict[str, Any], work: Path, timeout: int = DEFAULT_TIMEOUT) -> Outcome:
    repo, commit = peer["repo"], peer["commit"]
    out = Outcome(repo=label_name(peer), grade=float(peer["grade"]))
    git_dir = find_git_dir(repo, commit)
    if git_dir is None:
        out.status, out.detail = "no-mirror", "no git dir holding the commit"
        return out
    slug = label_name(peer).replace("/", "__")
    clone = work / slug / "repo"
    outdir = work / slug / "out"
    outdir.mkdir(parents=True, exist_ok=True)
    try:
        checkout(git_dir, commit, clone)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        out.status, out.detail = "failed", f"checkout failed: {exc}"
        return out
    pdf: Path | None = None
    if peer.get("report_path"):
        pdf = clone / peer["report_path"]
        if not pdf.is_file():  # absent in the snapshot (e.g. a large file): use the corpus copy
            corpus = CORPUS_PDFS / f"{repo.replace('/', '__')}__final_report.pdf"
            pdf = corpus if corpus.is_file() else None
    if pdf is None:
        pdf = blank_pdf(work / slug / "no_report.pdf")
    cmd = [sys.executable, "-m", "automaton_auditor", str(clone), str(pdf),
           "--json", "-q", "--no-cache", "--output-dir", str(outdir)]
    start = time.monotonic()
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False,
                             cwd=str(work))
    except subprocess.TimeoutExpired:
        out.seconds = time.monotonic() - start
        out.status, out.detail = "failed", f"timed out after {timeout}s"
        return out
    out.seconds = time.monotonic() - start
    out.exit_code = res.returncode
    report = _read_report(res.stdout, outdir)
    if report is None:
        err = (res.stderr.strip().splitlines() or ["(no stderr)"])[-1]
        out.status, out.detail = "failed", f"exit {res.returncode}: {err[:160]}"
        return out
    if res.returncode not in (0, 1):
        out.detail = f"exit {res.returncode} (partial report)"
    out.overall = report.get("overall_score")
    for crit in report.get("criteria", []):
        cid = crit.get("dimension_id") or crit.get("id")
        if cid is not None and crit.get("final_score") is not None:
            out.scores[cid] = crit["final_score"]
    for key in ("verified_paths", "hallucinated_paths", "planned_paths"):
        if key in report:
            out.paths[key] = [_norm_path(p) for p in report.get(key) or []]
    out.has_planned_key = "planned_paths" in report
    return out


def _read_report(stdout: str, outdir: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(stdout)
        if isinstance(data, dict) and "criteria" in data:
            return data
    except json.JSONDecodeError:
        pass
    found = sorted(outdir.glob("**/report.json"))
    if found:
        try:
            return json.loads(found[0].read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return None
    return None


# --------------------------------------------------------------------------- comparison


def compare_directions(
    peer: dict[str, Any], out: Outcome
) -> list[tuple[str, str, int | None, bool]]:
    """(criterion, label, auditor score, holds) for every labelled criterion."""
    rows = []
    for cid, lab in peer.get("criteria", {}).items():
        score = out.scores.get(cid)
        rows.append((cid, lab["direction"], score,
                     score is not None and direction_holds(lab["direction"], score)))
    return rows


def path_verdict(path: str, out: Outcome) -> str:
    """How the auditor classified `path`: verified, hallucinated, planned or unseen."""
    for key, name in (("verified_paths", "verified"), ("hallucinated_paths", "hallucinated"),
                      ("planned_paths", "planned")):
        if path in out.paths.get(key, []):
            return name
    return "unseen"


def compare_paths(peer: dict[str, Any], out: Outcome) -> list[tuple[str, str, str, bool]]:
    """(path, label, auditor verdict, agrees) for every labelled cited path.

    A `planned` label agrees with an auditor `planned` verdict; when report.json has no
    planned_paths list at all, it agrees when the path is neither verified nor hallucinated.
    """
    rows = []
    cited = peer.get("cited_paths", {})
    for label in ("verified", "hallucinated", "planned"):
        for path in cited.get(label, []):
            got = path_verdict(path, out)
            no_planned_list = label == "planned" and not out.has_planned_key
            ok = got == "unseen" if no_planned_list else got == label
            rows.append((path, label, got, ok))
    return rows


def spearman(xs: list[float], ys: list[float]) -> float | None:
    """Spearman's rho with average ranks for ties (None below 3 pairs or with no spread)."""
    if len(xs) < 3:
        return None

    def ranks(v: list[float]) -> list[float]:
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2 + 1
            i = j + 1
        return r

    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    vx = sum((a - mx) ** 2 for a in rx) ** 0.5
    vy = sum((b - my) ** 2 for b in ry) ** 0.5
    if vx == 0 or vy == 0:
        return None
    return cov / (vx * vy)


# --------------------------------------------------------------------------- printing


def _cell(label: dict[str, Any] | None, score: int | None) -> str:
    s = "-" if score is None else str(score)
    if label is None:
        return f" {s} "
    ok = score is not None and direction_holds(label["direction"], score)
    return f"{s}{label['direction'][0].upper()}{'✓' if ok else '✗'}"


def run(peers: list[dict[str, Any]], jobs: int, timeout: int, keep: Path | None) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="auditor_realworld_"))
    try:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            outcomes = list(pool.map(lambda p: audit_peer(p, work, timeout), peers))
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            for d in work.glob("*/out"):
                shutil.copytree(d, keep / d.parent.name, dirs_exist_ok=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return summarise(peers, outcomes)


def summarise(peers: list[dict[str, Any]], outcomes: list[Outcome]) -> dict[str, Any]:
    width = max((len(label_name(p)) for p in peers), default=10)
    print(f"{'repository':<{width}}  grade overall  " + " ".join(f"{s:>6}" for s in SHORT))
    dir_total = dir_hold = 0
    path_total = path_ok = 0
    pairs: list[tuple[float, float]] = []
    reported: list[tuple[float, float]] = []  # the peers that committed a report
    mismatched_paths: list[str] = []
    failures: list[str] = []
    rows: list[dict[str, Any]] = []
    for peer, out in zip(peers, outcomes, strict=True):
        name = label_name(peer)
        if out.status != "ok":
            failures.append(f"{name}: {out.status} ({out.detail})")
            print(f"{name:<{width}}  {out.grade:>5.1f}  {out.status.upper()}: {out.detail}")
            rows.append({"repo": name, "status": out.status, "detail": out.detail,
                         "exit_code": out.exit_code})
            continue
        labels = peer.get("criteria", {})
        cells = " ".join(f"{_cell(labels.get(c), out.scores.get(c)):>6}" for c in CRITERIA)
        overall = "-" if out.overall is None else f"{out.overall:.2f}"
        note = f"  [{out.detail}]" if out.detail else ""
        print(f"{name:<{width}}  {out.grade:>5.1f} {overall:>7}  {cells}{note}")
        drows = compare_directions(peer, out)
        prows = compare_paths(peer, out)
        dir_total += len(drows)
        dir_hold += sum(1 for r in drows if r[3])
        path_total += len(prows)
        path_ok += sum(1 for r in prows if r[3])
        wrong = [f"{p} ({lab}->{got})" for p, lab, got, ok in prows if not ok]
        if wrong:
            mismatched_paths.append(f"{name}: " + ", ".join(wrong))
        if out.overall is not None:
            pairs.append((float(out.overall), out.grade))
            if peer.get("report_path"):
                reported.append((float(out.overall), out.grade))
        rows.append({"repo": name, "status": "ok", "exit_code": out.exit_code,
                     "seconds": round(out.seconds, 1), "overall": out.overall,
                     "grade": out.grade, "scores": out.scores,
                     "directions": [list(r) for r in drows], "paths": [list(r) for r in prows],
                     "auditor_paths": out.paths})
    rho = spearman([a for a, _ in pairs], [b for _, b in pairs])
    has_planned = any(o.has_planned_key for o in outcomes if o.status == "ok")
    print()
    print("cells: auditor score, label (H >=4, M 2-4, L <=2), ✓ holds / ✗ does not")
    print(f"audited: {len(pairs)} of {len(peers)} labelled peers"
          + (f" ({len(failures)} not audited)" if failures else ""))
    pct = f" ({100 * dir_hold / dir_total:.0f}%)" if dir_total else ""
    print(f"labelled directions holding: {dir_hold}/{dir_total}{pct}")
    print("Spearman(overall score, grade): "
          + ("n/a" if rho is None else f"{rho:+.2f}") + f" over {len(pairs)} repos")
    # without a report the three report criteria are not judged, so the overall score is the
    # mean of the seven code criteria while the grade counts the missing report
    rho_reported = spearman([a for a, _ in reported], [b for _, b in reported])
    print("  over the peers that committed a report: "
          + ("n/a" if rho_reported is None else f"{rho_reported:+.2f}")
          + f" ({len(reported)} repos)")
    keys = "verified_paths, hallucinated_paths" + (", planned_paths" if has_planned else "")
    pct = f" ({100 * path_ok / path_total:.0f}%)" if path_total else ""
    print(f"cited-path labels agreeing: {path_ok}/{path_total}{pct}  (report.json has: {keys})")
    if mismatched_paths:
        print("paths labelled -> auditor verdict, where they differ:")
    for line in mismatched_paths:
        print(f"  ✗ {line}")
    for line in failures:
        print(f"  not audited: {line}")
    second = second_reading(peers, outcomes)
    return {"second_reading": second, "directions": [dir_hold, dir_total], "spearman": rho,
            "spearman_with_report": rho_reported, "paths": [path_ok, path_total], "repos": rows}


def second_reading(peers: list[dict[str, Any]], outcomes: list[Outcome]
                   ) -> dict[str, int] | None:
    """Print how far the blind second reading agrees with the first labels, and how often
    the auditor's score holds each reading, over the cells of audited peers."""
    if not SECOND_READING.is_file():
        return None
    cells = json.loads(SECOND_READING.read_text(encoding="utf-8"))["cells"]
    first = {label_name(p): p.get("criteria", {}) for p in peers}
    scores = {o.repo: o.scores for o in outcomes if o.status == "ok"}
    counts = {"cells": 0, "readers_agree": 0, "auditor_first": 0, "auditor_second": 0,
              "auditor_either": 0}
    for cell in cells:
        label = first.get(cell["repo"], {}).get(cell["criterion"])
        score = scores.get(cell["repo"], {}).get(cell["criterion"])
        if label is None or score is None:
            continue
        one = direction_holds(label["direction"], score)
        two = direction_holds(cell["direction"], score)
        counts["cells"] += 1
        counts["readers_agree"] += label["direction"] == cell["direction"]
        counts["auditor_first"] += one
        counts["auditor_second"] += two
        counts["auditor_either"] += one or two
    if counts["cells"]:
        print(f"second reading ({counts['cells']} cells read blind again): the readers give "
              f"the same direction on {counts['readers_agree']}; the auditor holds the first "
              f"reading on {counts['auditor_first']}, the second on "
              f"{counts['auditor_second']}, either on {counts['auditor_either']}")
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-j", "--jobs", type=int, default=2, help="audits at once (1 or 2; default 2)")
    ap.add_argument("-k", "--only", action="append", help="only repos containing this (repeatable)")
    ap.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT, help="seconds per audit")
    ap.add_argument("--save", type=Path, help="write the comparison as JSON here")
    ap.add_argument("--keep", type=Path, help="copy each audit's report.md/json into this folder")
    args = ap.parse_args(argv)
    jobs = max(1, min(2, args.jobs))  # the machine is shared: never more than two audits
    peers = load_labels(args.only)
    if not peers:
        print("no labelled peers matched", file=sys.stderr)
        return 2
    result = run(peers, jobs, args.timeout, args.keep)
    if args.save:
        args.save.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n",
                             encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
