"""Hostile local repositories. A repository armed to run code (hooks, fsmonitor, ssh commands,
aliases, pagers, filters, submodules, LFS) is audited with nothing run (exit 0); one whose git
files are FIFOs, devices, huge or point out of the target is refused fast, without reading
outside it (exit 3 with a partial report: it cannot be acquired); a folder that is not a
repository is an input error (exit 2); odd but legal git setups (shallow, partial, alternates,
bare) and odd but legal paths are audited (exit 0); a linked worktree, whose git dir lies
outside the target, is refused like any `.git` file pointing out."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.hostile.builders import hook, special, valid_repo
from tests.hostile.harness import Case, Stream, audit_and_check, params
from tests.unit.test_git_narrative import git

HOOKS = ("pre-commit", "post-checkout", "post-merge", "post-rewrite", "post-index-change",
         "reference-transaction", "pre-auto-gc", "pre-upload-pack", "post-update",
         "fsmonitor-watchman", "push-to-checkout", "pre-receive", "update")


def _repo(case: Case, name: str = "target") -> Path:
    return valid_repo(case.sandbox / name, case.root.name)


def _commit(repo: Path, files: dict[str, str], message: str = "feat: more") -> None:
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def _config(repo: Path, **values: str) -> None:
    for key, value in values.items():
        git(repo, "config", key.replace("__", "."), value)


def hooks(case: Case) -> Path:
    repo = _repo(case)
    for name in HOOKS:
        hook(repo / ".git" / "hooks" / name, case.canary)
        hook(case.sandbox / "evilhooks" / name, case.canary)
    _config(repo, core__hooksPath=str(case.sandbox / "evilhooks"))
    return repo


def fsmonitor(case: Case) -> Path:
    repo = _repo(case)
    _config(repo, core__fsmonitor=str(hook(case.sandbox / "fsmon.sh", case.canary)),
            core__untrackedCache="true")
    return repo


def ssh_command(case: Case) -> Path:
    repo = _repo(case)
    touch = f"touch {case.canary}"
    _config(repo, core__sshCommand=touch, core__gitProxy=touch,
            remote__origin__url="ssh://127.0.0.1/owner/repo.git",
            remote__origin__uploadpack=touch, remote__origin__fetch="+refs/*:refs/*")
    return repo


def ext_remote(case: Case) -> Path:
    repo = _repo(case)
    _config(repo, protocol__allow="always", protocol__ext__allow="always",
            remote__origin__url=f"ext::sh -c touch% {case.canary}",
            remote__origin__promisor="true", remote__origin__partialclonefilter="blob:none",
            extensions__partialClone="origin")
    return repo


def aliases_pagers_diff(case: Case) -> Path:
    repo = _repo(case)
    _commit(repo, {".gitattributes": "* diff=evil\n"}, "chore: attributes")
    touch = f"!touch {case.canary}"
    _config(repo, **{f"alias__{name}": touch for name in
                     ("log", "rev-parse", "ls-tree", "cat-file", "show", "status", "diff")},
            core__pager=touch[1:], pager__log=touch[1:], core__editor=touch[1:],
            diff__external=touch[1:], diff__evil__textconv=touch[1:],
            diff__evil__command=touch[1:], sequence__editor=touch[1:])
    return repo


def filters(case: Case) -> Path:
    repo = _repo(case)
    _commit(repo, {".gitattributes": "* filter=evil\n", "src/extra.py": "x = 1\n"},
            "chore: attributes")
    touch = f"touch {case.canary}"
    _config(repo, filter__evil__smudge=touch, filter__evil__clean=touch,
            filter__evil__process=touch, filter__evil__required="true")
    return repo


def symlinks_out(case: Case) -> Path:
    repo = _repo(case)
    secret = case.sandbox / "outside" / "secret.txt"
    (repo / "escape").symlink_to(case.sandbox / "outside")
    (repo / "secret_link.py").symlink_to(secret)
    (repo / "relative.md").symlink_to(Path("..") / "outside" / "secret.txt")
    (repo / "passwd").symlink_to("/etc/passwd")
    (repo / "zero").symlink_to("/dev/zero")
    _commit(repo, {}, "feat: links")
    return repo


def submodule(case: Case) -> Path:
    repo = _repo(case)
    (repo / ".gitmodules").write_text(
        f'[submodule "sub"]\n\tpath = sub\n\turl = ext::sh -c touch% {case.canary}\n'
        f'[submodule "other"]\n\tpath = other\n\turl = {case.sandbox / "outside"}\n')
    git(repo, "add", ".gitmodules")
    for path in ("sub", "other"):
        git(repo, "update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},{path}")
    git(repo, "commit", "-q", "-m", "feat: submodules")
    _config(repo, submodule__recurse="true", protocol__allow="always")
    return repo


def lfs(case: Case) -> Path:
    repo = _repo(case)
    _commit(repo, {".gitattributes": "*.bin filter=lfs diff=lfs merge=lfs -text\n",
                   "model.bin": "version https://git-lfs.github.com/spec/v1\n"
                                f"oid sha256:{'0' * 64}\nsize 12345\n"}, "feat: lfs model")
    touch = f"touch {case.canary}"
    _config(repo, filter__lfs__smudge=touch, filter__lfs__process=touch,
            filter__lfs__required="true", lfs__url=f"ext::sh -c touch% {case.canary}")
    return repo


def big_file(case: Case) -> Path:
    repo = _repo(case)
    _config(repo, core__compression="0")  # only to build the case fast
    (repo / "data").mkdir()
    (repo / "data" / "big.bin").write_bytes(os.urandom(50 * 1024 * 1024))
    _commit(repo, {}, "data: 50 MB")
    return repo


def diff_bomb(case: Case) -> Path:
    """A 40 MB text file of two-byte lines, then rewritten line for line: the repository
    stays under a megabyte, but a line diff of the two holds a record per line (git's xdiff
    took one history read to 1.8 GB before blobs this large were diffed as binary)."""
    repo = _repo(case)
    _commit(repo, {"data/lines.txt": "a\n" * (20 << 20)}, "data: a")
    _commit(repo, {"data/lines.txt": "b\n" * (20 << 20)}, "data: b")
    return repo


def code_bombs(case: Case) -> Path:
    """Python the AST pass must survive without running it: nesting past the parser's depth,
    a 900 KB chain of additions (one deep expression tree), 200,000 tiny statements, and a
    5 MB module over the per-file bound."""
    repo = _repo(case)
    _commit(repo, {
        "src/nested.py": "x = " + "(" * 100_000 + "1" + ")" * 100_000 + "\n",
        "src/chain.py": "x = " + "+".join(["1"] * 450_000) + "\n",
        "src/many.py": "".join(f"v{i} = {i}\n" for i in range(200_000)),
        "src/huge.py": "# " + "x" * (5 * 1024 * 1024) + "\n",
    }, "feat: generated modules")
    return repo


def deep_graph_code(case: Case) -> Path:
    """Graph code that parses but is deeper than the readers recurse (each ``elif`` nests the
    next test, ``"n" + "n" + ...`` nests each sum, ``not not ... x``), and a quoted return
    annotation 100,000 attributes deep: the file is left out of the analysis, the audit goes
    on (it once ended with a RecursionError and 8 criteria not judged)."""
    repo = _repo(case)
    elif_chain = "".join(f"    elif x == {i}:\n        return 'b'\n" for i in range(1, 400))
    _commit(repo, {"src/router.py": (
        "from langgraph.graph import StateGraph, START\n\n\n"
        "def route(state):\n    x = state['k']\n    if x == 0:\n        return 'a'\n"
        + elif_chain + "\n\ndef build(builder: StateGraph):\n"
        + "    builder.add_node(" + " + ".join(['"n"'] * 1000) + ", route)\n"
        + "    builder.add_conditional_edges(START, lambda s: " + "not " * 900 + "s)\n"
        + "\n\ndef later(state) -> \"x" + ".b" * 100_000 + "\":\n    return 'a'\n")},
        "feat: router")
    return repo


def _alias_bomb(levels: int = 12) -> str:
    """Under a kilobyte of YAML whose nested aliases stand for 9**levels strings."""
    lines = ['l0: &l0 ["prosecutor: argue low", "defense: argue high"]']
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, levels)]
    return "\n".join([*lines, f"judicial_logic: {{prosecutor: *l{levels - 1}, defense: *l1}}"])


def data_bombs(case: Case) -> Path:
    """Data files the persona readers load without walking them forever: a YAML alias bomb
    named like a prompt file, the same bomb and a JSON nested past the parser's depth as
    files the judges' code names and reads by persona."""
    repo = _repo(case)
    _commit(repo, {
        "prompts/persona_prompts.yaml": _alias_bomb(),
        "config/personas.yaml": _alias_bomb(),
        "config/rubric.json": "[" * 100_000 + "]" * 100_000,
        "src/judges.py": (
            "import json\nimport yaml\n\n\n"
            "def judge(state, persona):\n"
            "    logic = yaml.safe_load(open('config/personas.yaml'))\n"
            "    rubric = json.load(open('config/rubric.json'))\n"
            "    return {'opinion': logic['judicial_logic'][persona], 'r': rubric}\n"),
    }, "feat: personas from data")
    return repo


def head_traversal(case: Case) -> Path:
    """HEAD names a "ref" outside .git: the secret (40 hex digits) would pass for a commit."""
    repo = _repo(case)
    (repo / ".git" / "HEAD").write_text("ref: refs/../../../outside/secret.txt\n")
    return repo


def head_absolute(case: Case) -> Path:
    repo = _repo(case)
    (repo / ".git" / "HEAD").write_text(f"ref: {case.sandbox / 'outside' / 'secret.txt'}\n")
    return repo


def gitfile_outside(case: Case) -> Path:
    """`.git` is a file whose gitdir is a repository outside the target."""
    elsewhere = _repo(case, "outside/elsewhere")
    target = case.sandbox / "target"
    target.mkdir()
    (target / ".git").write_text(f"gitdir: {elsewhere / '.git'}\n")
    return target


def gitfile_fifo_head(case: Case) -> Path:
    """`.git` is a file; the git dir it names (inside the target) has HEAD as a FIFO."""
    target = _repo(case)
    shutil.move(target / ".git", target / ".hidden-git")
    (target / ".git").write_text("gitdir: .hidden-git\n")
    special(target / ".hidden-git" / "HEAD", "fifo")
    return target


def replaced(rel: str, kind: str, pack: bool = False) -> Callable[[Case], Path]:
    """A valid repository whose .git/`rel` is replaced by a `special` file."""
    def build(case: Case) -> Path:
        repo = _repo(case)
        if pack:
            git(repo, "pack-refs", "--all", "--prune")
        special(repo / ".git" / rel, kind)
        return repo
    return build


def _source(case: Case) -> Path:
    return _repo(case, "source")


def shallow(case: Case) -> Path:
    source, target = _source(case), case.sandbox / "target"
    git(case.sandbox, "clone", "-q", "--depth", "1", f"file://{source}", str(target))
    return target


def partial_origin_gone(case: Case) -> Path:
    source, target = _source(case), case.sandbox / "target"
    _config(source, uploadpack__allowFilter="true")
    git(case.sandbox, "clone", "-q", "--filter=blob:none", f"file://{source}", str(target))
    shutil.rmtree(source)
    return target


def alternates(case: Case) -> Path:
    source, target = _source(case), case.sandbox / "target"
    git(case.sandbox, "clone", "-q", "--shared", str(source), str(target))
    return target


def bare(case: Case) -> Path:
    source, target = _source(case), case.sandbox / "target.git"
    git(case.sandbox, "clone", "-q", "--bare", str(source), str(target))
    return target


def worktree(case: Case) -> Path:
    source, target = _source(case), case.sandbox / "target"
    git(source, "worktree", "add", "-q", "-b", "side", str(target))
    return target


def named(name: str) -> Callable[[Case], Path]:
    def build(case: Case) -> Path:
        return _repo(case, name)
    return build


def not_a_repository(case: Case) -> Path:
    folder = case.sandbox / "plain"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "graph.py").write_text("x = 1\n")
    return folder


def empty_repository(case: Case) -> Path:
    folder = case.sandbox / "empty"
    folder.mkdir()
    git(folder, "init", "-q", "-b", "main")
    return folder


def a_file(case: Case) -> Path:
    path = case.sandbox / "repo.zip"
    path.write_bytes(b"PK\x03\x04 not a folder")
    return path


def missing(case: Case) -> Path:
    return case.sandbox / "no-such-repo"


# (id, builder, exit code, stream, needle, marks)
CASES: list[tuple[str, Callable[[Case], Path], int, Stream, str, tuple[object, ...]]] = [
    ("hooks", hooks, 0, "any", "", ()),
    ("fsmonitor", fsmonitor, 0, "any", "", ()),
    ("ssh-command", ssh_command, 0, "any", "", ()),
    ("ext-remote-promisor", ext_remote, 0, "any", "", ()),
    ("aliases-pagers-diff", aliases_pagers_diff, 0, "any", "", ()),
    ("filters", filters, 0, "any", "", ()),
    ("symlinks-out", symlinks_out, 0, "any", "", ()),
    ("submodule", submodule, 0, "any", "", ()),
    ("lfs-pointer", lfs, 0, "any", "", ()),
    ("big-file-50mb", big_file, 0, "any", "", (pytest.mark.hostile_slow,)),
    ("diff-bomb", diff_bomb, 0, "any", "", (pytest.mark.hostile_slow,)),
    ("code-bombs", code_bombs, 0, "any", "", ()),
    ("deep-graph-code", deep_graph_code, 0, "any", "", ()),
    ("data-bombs", data_bombs, 0, "any", "", ()),
    ("head-traversal", head_traversal, 3, "error", "HEAD", ()),
    ("head-absolute", head_absolute, 3, "error", "HEAD", ()),
    ("gitfile-outside", gitfile_outside, 3, "error", ".git", ()),
    ("gitfile-fifo-head", gitfile_fifo_head, 3, "error", "HEAD", ()),
    ("head-fifo", replaced("HEAD", "fifo"), 3, "error", "HEAD", ()),
    ("head-dev-zero", replaced("HEAD", "dev-zero"), 3, "error", "HEAD", ()),
    ("head-sparse-2g", replaced("HEAD", "sparse"), 3, "error", "HEAD", ()),
    ("packed-refs-fifo", replaced("packed-refs", "fifo", pack=True), 3, "error",
     "packed-refs", ()),
    ("packed-refs-sparse-2g", replaced("packed-refs", "sparse", pack=True), 3, "error",
     "packed-refs", ()),
    ("config-fifo", replaced("config", "fifo"), 3, "error", "config", ()),
    ("alternates-fifo", replaced("objects/info/alternates", "fifo"), 3, "error",
     "alternates", ()),
    ("index-dev-zero", replaced("index", "dev-zero"), 3, "error", "index", ()),
    ("shallow-depth-1", shallow, 0, "warning", "shallow", ()),
    ("partial-origin-gone", partial_origin_gone, 0, "any", "", ()),
    ("alternates", alternates, 0, "any", "", ()),
    ("bare", bare, 0, "any", "", ()),
    # A linked worktree's git dir lives in the main repository, outside the target: by the
    # rule that a `.git` file pointing outside the target is never followed, it is refused
    # (audit the main repository or a clone instead).
    ("worktree", worktree, 3, "error", "outside the target", ()),
    ("path-parentheses", named("team (final)"), 0, "any", "", ()),
    ("path-spaces", named("my team repo"), 0, "any", "", ()),
    ("path-unicode", named("équipe-репо-チーム"), 0, "any", "", ()),
    ("path-shell", named("x$(touch CANARY);y"), 0, "any", "", ()),
    ("not-a-repository", not_a_repository, 2, "error", "not a git repository", ()),
    ("empty-repository", empty_repository, 3, "error", "", ()),
    ("a-file", a_file, 2, "error", "not a directory", ()),
    ("missing", missing, 2, "error", "does not exist", ()),
]


@pytest.mark.parametrize(("build", "code", "stream", "needle"), params(CASES))
def test_local_repository(case: Case, good_pdf: Path, build: Callable[[Case], Path], code: int,
                          stream: Stream, needle: str) -> None:
    target = build(case)
    assert not case.canary.exists()  # building the case ran none of it
    audit_and_check(case, target, good_pdf, code, stream, needle, fast=code == 3)


def test_the_trap_is_live(case: Case) -> None:
    """The armed repositories are real traps: git run naively inside one fires the canary."""
    repo = fsmonitor(case)
    subprocess.run(["git", "-C", str(repo), "status"], capture_output=True, check=False,
                   env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull})
    assert case.canary.exists()
