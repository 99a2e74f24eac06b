"""A hostile git: whatever the user configured, and every state a person leaves the store's git in.

memdir's git is its own engine (DESIGN §2, invariant 9). Each test builds the environment a real
user has: a temporary HOME with a real ``~/.gitconfig`` (``GIT_CONFIG_GLOBAL`` points at a file
the test writes), a real hooks folder whose hooks fail, sleep or leave a mark, real clones,
real merges, rebases and submodules, leaked ``GIT_*`` variables, and a ``git`` on ``PATH`` that
fails one chosen step. Every command runs the real ``memdir`` CLI (or ``memdir hook``) in a
subprocess. Expected every time: the write is acknowledged and durable, or refused and absent
with a clear error naming what failed (never a traceback); nothing is left staged; the next
unrelated write commits only itself; ``health`` tells the truth.

Cases B43 (a failing user hook half-applies a rollback), B44 (settings only where ``init`` ran),
B45 (a failed write is live), B58 (store git states), B59 (a slow user hook), B60 (``--store``
advice) of ``shared/cases``, each with its class.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import git

MEMDIR = [sys.executable, "-m", "memdir"]
HOOKS = (
    "pre-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "reference-transaction",
    "post-index-change",
    "pre-auto-gc",
    "post-rewrite",
)
"""Hooks a commit, a ref update or an index write can run; each fails and leaves a mark."""


@dataclass
class Ran:
    """A finished CLI run."""

    code: int
    out: str
    err: str
    seconds: float

    def json(self) -> Any:
        return json.loads(self.out)


def cli(*args: str, store: Path | None = None, env: dict[str, str] | None = None) -> Ran:
    """Run ``memdir ARGS [--store STORE]``; never a traceback, whatever happens."""
    extra = ["--store", str(store)] if store is not None else []
    started = time.monotonic()
    done = subprocess.run(
        [*MEMDIR, *args, *extra],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        check=False,
        timeout=120,
    )
    took = time.monotonic() - started
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    return Ran(done.returncode, done.stdout, done.stderr, took)


def remember(store: Path, text: str, env: dict[str, str] | None = None) -> str:
    """Remember ``text`` (must succeed); return the record id."""
    ran = cli("remember", text, "--json", store=store, env=env)
    assert ran.code == 0, ran.err
    record_id = ran.json()["id"]
    assert isinstance(record_id, str)
    return record_id


def recalled(store: Path, query: str, env: dict[str, str] | None = None) -> list[str]:
    """The texts ``recall`` returns for ``query``."""
    ran = cli("recall", query, "--json", store=store, env=env)
    assert ran.code == 0, ran.err
    return [hit["text"] for hit in ran.json()["results"]]


def health(store: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    """``memdir health --json``: it answers (exit 0 ok, 1 findings), never crashes."""
    ran = cli("health", "--json", store=store, env=env)
    assert ran.code in (0, 1), ran.err
    report = ran.json()
    assert isinstance(report, dict)
    return report


def codes(report: dict[str, Any]) -> set[str]:
    return {f["code"] for f in report["findings"] if f["level"] in ("error", "warning")}


def staged(store: Path) -> str:
    """What git's index holds that HEAD does not (empty: nothing staged)."""
    return git(store, "diff", "--cached", "--name-status")


def porcelain(store: Path) -> str:
    return git(store, "status", "--porcelain", "--untracked-files=all")


def record_files(store: Path) -> dict[str, bytes]:
    return {
        p.relative_to(store).as_posix(): p.read_bytes()
        for p in sorted((store / "records").rglob("*.md"))
    }


def head(store: Path) -> str:
    return git(store, "rev-parse", "HEAD").strip()


def last_commit_paths(store: Path) -> list[str]:
    """The files of the last commit, without the audit log every write appends to."""
    paths = git(store, "show", "--name-only", "--format=", "HEAD").split()
    return [p for p in paths if not p.startswith("audit/")]


@pytest.fixture
def gitconfig(isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], Path]:
    """Write the user's ``~/.gitconfig`` (and point git at it); return its path."""
    path = isolated_env / ".gitconfig"
    path.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(path))

    def write(text: str) -> Path:
        path.write_text(text)
        return path

    return write


def hooks_dir(root: Path, body: str, names: tuple[str, ...] = HOOKS) -> Path:
    """A real hooks folder: each hook runs ``body`` (``$0`` is the hook's path)."""
    folder = root / "user-hooks"
    folder.mkdir(exist_ok=True)
    for name in names:
        hook = folder / name
        hook.write_text(f"#!/bin/sh\n{body}\n")
        hook.chmod(0o755)
    return folder


def failing_git(root: Path, step: str) -> dict[str, str]:
    """A ``git`` first on ``PATH`` that fails ``git -C DIR <step>``, as a broken disk would."""
    real = shutil.which("git")
    assert real
    folder = root / f"failing-{step}"
    folder.mkdir(parents=True)
    wrapper = folder / "git"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'if [ "$3" = "{step}" ]; then echo "fatal: injected failure in {step}" >&2; exit 128; fi\n'
        f'exec {real} "$@"\n'
    )
    wrapper.chmod(0o755)
    return {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}


# --- B43: a user's hooks, and a failing commit, never half-apply a write -----------------------


@pytest.mark.slow
@pytest.mark.parametrize("hook", HOOKS)
def test_user_hooks_never_run_and_every_write_completes(
    store: Path, tmp_path: Path, gitconfig: Callable[[str], Path], hook: str
) -> None:
    """B43: a user-wide ``core.hooksPath`` whose hook fails: remember, rollback, sync all work."""
    marks = tmp_path / "marks"
    marks.mkdir()
    folder = hooks_dir(tmp_path, f'echo ran > {marks}/$(basename "$0"); exit 1', (hook,))
    gitconfig(f"[core]\n\thooksPath = {folder}\n")
    first = remember(store, "The queue is SQS")
    remember(store, "The cache is Redis")
    ran = cli("rollback", "HEAD", "--yes", "--json", store=store)
    assert ran.code == 0, ran.err
    assert recalled(store, "cache Redis") == []
    (store / "records" / "fact" / "f-handmade00aaaa.md").write_text(
        "---\nid: f-handmade00aaaa\nkind: fact\nstatus: active\ntext: Hand made note\n"
        "origin: owner\n---\n"
    )
    assert cli("sync", store=store).code == 0
    third = remember(store, "Deploys happen on Tuesdays")
    assert not list(marks.iterdir()), "a user hook ran"
    assert staged(store) == "" and porcelain(store) == ""
    assert last_commit_paths(store) == [f"records/fact/{third}.md"]
    assert recalled(store, "queue SQS") == ["The queue is SQS"]
    assert first
    report = health(store)
    assert report["ok"], report


STEPS = ("read-tree", "update-index", "write-tree", "commit-tree", "update-ref")


@pytest.mark.slow
@pytest.mark.parametrize("step", STEPS)
def test_failed_rollback_and_sync_leave_nothing_staged(
    store: Path, tmp_path: Path, step: str
) -> None:
    """B43: git fails at any step of a rollback or a sync: the store is exactly as it was."""
    remember(store, "The queue is SQS")
    remember(store, "The cache is Redis")
    # memdir's own index mirrors HEAD after a write; drop it so read-tree runs too
    shutil.rmtree(store / ".git" / "memdir", ignore_errors=True)
    broken = failing_git(tmp_path, step)
    before, files = head(store), record_files(store)
    ran = cli("rollback", "HEAD", "--yes", store=store, env=broken)
    assert ran.code == 1 and "nothing was stored" in ran.err and step in ran.err, ran.err
    assert (head(store), record_files(store)) == (before, files)
    assert staged(store) == "" and porcelain(store) == ""
    assert recalled(store, "cache Redis") == ["The cache is Redis"]
    hand = store / "records" / "fact" / "f-handmade00aaaa.md"
    hand.write_text("---\nid: f-handmade00aaaa\nkind: fact\ntext: Hand made\n---\n")
    shutil.rmtree(store / ".git" / "memdir", ignore_errors=True)
    # sync commits folders with `git add -A` (in memdir's own index) where a write updates files
    broken = failing_git(tmp_path / "sync", "add" if step == "update-index" else step)
    ran = cli("sync", store=store, env=broken)
    assert ran.code == 1 and "injected failure" in ran.err, ran.err
    assert head(store) == before and staged(store) == ""
    hand.unlink()
    third = remember(store, "Deploys happen on Tuesdays")
    assert last_commit_paths(store) == [f"records/fact/{third}.md"]
    assert staged(store) == "" and porcelain(store) == ""
    assert health(store)["ok"]
    # the right thing is there once git works: the rollback completes
    assert cli("rollback", "HEAD~1", "--yes", store=store).code == 0
    assert recalled(store, "cache Redis") == []


def test_memdir_own_index_unreadable_is_rebuilt_and_the_write_completes(store: Path) -> None:
    """memdir's own (split) index torn or its shared part expired: rebuilt, never a failed write.

    Paired: a small store keeps whole indexes and leaves no shared part in ``.git``; a large
    one (past ``SPLIT_FROM_BYTES``, marked beside the index) is split, so a write at 100,000
    records does not rewrite a 6.9 MB file three times (``docs/performance.md``).
    """
    first = remember(store, "The queue is SQS")
    own = store / ".git" / "memdir" / "index"
    assert "link" not in _index_extensions(own)
    assert not list((store / ".git").glob("sharedindex.*"))
    (own.parent / "split").touch()  # as memdir marks it once the index passes 512 KiB
    remember(store, "Deploys go out on Tuesdays")
    assert "link" in _index_extensions(own)  # split: a link to its shared part
    own.write_bytes(b"DIRC\0\0\0\2 torn")
    second = remember(store, "The cache is Redis")
    assert last_commit_paths(store) == [f"records/fact/{second}.md"]
    assert sorted(recalled(store, "queue SQS cache Redis")) == [
        "The cache is Redis",
        "The queue is SQS",
    ]
    assert staged(store) == "" and porcelain(store) == ""
    assert first and health(store)["ok"]


def test_moving_head_under_memdir_leaves_no_shared_index_behind(
    store: Path, tmp_path: Path
) -> None:
    """Each time HEAD moves under memdir (a sync, a person's commit) its index is rebuilt.

    Its old shared part, used by no index any more, is removed (at 100,000 records 6.9 MB each
    time, kept two weeks by git otherwise); paired: the person's index and memdir's still read.
    """
    lines = [{"id": f"f-01m8aaaaaa{n:04d}", "kind": "fact", "text": f"Fact {n}"} for n in range(60)]
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert cli("import", "--from", "jsonl", str(tmp_path / "in.jsonl"), store=store).code == 0
    (store / ".git" / "memdir" / "split").touch()  # a large store's split index, on 60 entries
    remember(store, "The queue is SQS")
    for n in range(4):
        git(store, "commit", "-q", "--allow-empty", "-m", f"a person's commit {n}")
        remember(store, f"Deploy {n}: the cache is Redis {n}")
    shared = sorted(p.name for p in (store / ".git").glob("sharedindex.*"))
    assert 1 <= len(shared) <= 2, shared
    assert staged(store) == "" and porcelain(store) == ""
    own = {"GIT_INDEX_FILE": str(store / ".git" / "memdir" / "index")}
    listed = subprocess.run(
        ["git", "-C", str(store), "ls-files"], env={**os.environ, **own}, capture_output=True
    )
    assert listed.returncode == 0 and b"records/fact/" in listed.stdout


def _index_extensions(index: Path) -> set[str]:
    """The four-letter extension names found in a git index file (``link``: a split index)."""
    data = index.read_bytes()
    return {name for name in ("link", "TREE", "UNTR") if name.encode() in data}


def test_a_person_staged_change_is_not_swept_into_a_write(store: Path) -> None:
    """B43's class: what a person staged in the store stays theirs, uncommitted."""
    record_id = remember(store, "The queue is SQS")
    path = store / "records" / "fact" / f"{record_id}.md"
    path.write_text(path.read_text().replace("importance: 5", "importance: 9"))
    git(store, "add", path.as_posix())
    other = remember(store, "The cache is Redis")
    assert last_commit_paths(store) == [f"records/fact/{other}.md"]
    assert staged(store).split() == ["M", f"records/fact/{record_id}.md"]


# --- B45: a write is acknowledged and durable, or refused and absent ---------------------------


@pytest.mark.slow
@pytest.mark.parametrize("step", STEPS[1:])
def test_failed_write_is_absent(store: Path, tmp_path: Path, step: str) -> None:
    """B45: git fails during ``remember``: exit 1 saying nothing was stored, and it is absent."""
    broken = failing_git(tmp_path, step)
    before, files = head(store), record_files(store)
    ran = cli("remember", "The queue is SQS", "--json", store=store, env=broken)
    assert ran.code == 1, ran.out
    error = ran.json()["error"]
    assert error["code"] == "git_error" and "nothing was stored" in error["message"]
    assert step in error["message"]
    assert recalled(store, "queue") == []
    assert (head(store), record_files(store)) == (before, files)
    assert staged(store) == "" and porcelain(store) == ""
    assert not (store / "state" / "intent.json").exists()
    # the same write, git working: acknowledged and there
    remember(store, "The queue is SQS")
    assert recalled(store, "queue") == ["The queue is SQS"]
    assert last_commit_paths(store)[0].startswith("records/fact/")


def test_failed_correction_keeps_the_old_belief(store: Path, tmp_path: Path) -> None:
    """B45's class: a two-file write (correct) that git refuses leaves both files as they were."""
    record_id = remember(store, "The queue is SQS")
    ran = cli(
        "correct",
        record_id,
        "--text",
        "The queue is Kafka",
        store=store,
        env=failing_git(tmp_path, "commit-tree"),
    )
    assert ran.code == 1 and "nothing was stored" in ran.err
    assert recalled(store, "queue") == ["The queue is SQS"]
    assert staged(store) == "" and porcelain(store) == ""
    assert cli("correct", record_id, "--text", "The queue is Kafka", store=store).code == 0
    assert recalled(store, "queue") == ["The queue is Kafka"]


def test_interrupted_write_that_git_refuses_stays_pending(store: Path, tmp_path: Path) -> None:
    """An intent a killed writer left is finished when git works; until then it is absent."""
    from memdir.kernel.storage import txn

    record_id = "f-0000000000zzzz"
    text = (
        f"---\nid: {record_id}\nkind: fact\nstatus: active\ntext: The port is 8080\n"
        "origin: owner\nimportance: 5\n---\n"
    )
    intent = {"message": f"remember {record_id}", "files": {f"records/fact/{record_id}.md": text}}
    (store / "state" / txn.INTENT_NAME).write_text(json.dumps(intent))
    broken = failing_git(tmp_path, "commit-tree")
    ran = cli("remember", "Unrelated belief", store=store, env=broken)
    assert ran.code == 1 and "interrupted write" in ran.err, ran.err
    assert not (store / "records" / "fact" / f"{record_id}.md").exists()
    report = health(store, env=broken)
    assert "write_pending" in codes(report)
    report = health(store)
    assert report["ok"] and "write_completed" in {f["code"] for f in report["findings"]}
    assert recalled(store, "port") == ["The port is 8080"]


# --- B44: settings that exist only where init ran ------------------------------------------------


def _strip_identity(env: dict[str, str]) -> dict[str, str]:
    return {
        k: v
        for k, v in env.items()
        if not k.startswith(("GIT_AUTHOR_", "GIT_COMMITTER_")) and k not in ("EMAIL", "HOME")
    }


@pytest.mark.parametrize("how", ["no HOME", "useConfigOnly"])
def test_no_identity_still_writes(store: Path, gitconfig: Callable[[str], Path], how: str) -> None:
    """B44(a)/B45: no git identity where the hook runs: the write works, as memdir."""
    env = _strip_identity(dict(os.environ))
    if how == "no HOME":
        env.pop("GIT_CONFIG_GLOBAL", None)
    else:
        gitconfig("[user]\n\tuseConfigOnly = true\n")
    done = subprocess.run(
        [*MEMDIR, "remember", "The queue is SQS", "--store", str(store)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert recalled(store, "queue") == ["The queue is SQS"]
    assert git(store, "log", "-1", "--format=%an <%ae>").strip() in (
        "memdir <memdir@localhost>",
        git(store, "var", "GIT_AUTHOR_IDENT").rsplit(">", 1)[0].strip() + ">",
    )
    report = subprocess.run(
        [*MEMDIR, "health", "--json", "--store", str(store)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert "Traceback" not in report.stderr and json.loads(report.stdout)["ok"]


@pytest.fixture
def cloned(store: Path, tmp_path: Path) -> Path:
    """A store reached by ``git clone``, not by ``memdir init``."""
    remember(store, "The queue is SQS")
    remember(store, "The cache is Redis")
    target = tmp_path / "clone" / ".memdir"
    target.parent.mkdir()
    git(tmp_path, "clone", "-q", str(store), str(target))
    return target


@pytest.mark.slow
def test_clone_with_signing_writes_syncs_and_rolls_back(
    cloned: Path, gitconfig: Callable[[str], Path]
) -> None:
    """B44(b): a clone plus ``commit.gpgsign=true`` with a gpg that fails: every write works."""
    gitconfig("[commit]\n\tgpgsign = true\n[tag]\n\tgpgsign = true\n[gpg]\n\tprogram = false\n")
    with pytest.raises(subprocess.CalledProcessError):  # the person's own git cannot commit
        git(cloned, "commit", "--allow-empty", "-qm", "person")
    remember(cloned, "Deploys happen on Tuesdays")
    (cloned / "journal").mkdir(exist_ok=True)
    (cloned / "journal" / "2026-12-03.jsonl").write_text('{"role": "user", "text": "hi"}\n')
    assert cli("sync", store=cloned).code == 0
    assert cli("rollback", "HEAD~1", "--yes", store=cloned).code == 0
    assert recalled(cloned, "Deploys Tuesdays") == []
    assert git(cloned, "log", "-1", "--format=%G?").strip() == "N"
    assert staged(cloned) == "" and porcelain(cloned) == ""
    assert health(cloned)["ok"]


def test_clone_with_autocrlf_and_safecrlf_writes(
    cloned: Path, gitconfig: Callable[[str], Path]
) -> None:
    """B44(c): ``core.autocrlf=true`` + ``core.safecrlf=true``: writes work, files stay LF."""
    gitconfig("[core]\n\tautocrlf = true\n\tsafecrlf = true\n")
    record_id = remember(cloned, "Deploys happen on Tuesdays")
    blob = git(cloned, "show", f"HEAD:records/fact/{record_id}.md")
    assert "\r" not in blob and "Deploys happen on Tuesdays" in blob
    assert recalled(cloned, "Deploys") == ["Deploys happen on Tuesdays"]
    report = health(cloned)
    assert report["ok"], report


def test_user_wide_ignore_and_attributes_do_not_hide_records(
    store: Path, tmp_path: Path, gitconfig: Callable[[str], Path]
) -> None:
    """B44's class: a user-wide ``*.md`` ignore and a CRLF attribute change nothing memdir keeps."""
    (tmp_path / "ignore").write_text("*.md\nrecords/\n")
    (tmp_path / "attributes").write_text("* text eol=crlf\n")
    gitconfig(
        f"[core]\n\texcludesFile = {tmp_path / 'ignore'}\n"
        f"\tattributesFile = {tmp_path / 'attributes'}\n"
    )
    record_id = remember(store, "The queue is SQS")
    hand = store / "records" / "fact" / "f-handmade00aaaa.md"
    hand.write_text("---\nid: f-handmade00aaaa\nkind: fact\ntext: Hand made\n---\n")
    assert "f-handmade00aaaa" in json.dumps(health(store))  # health sees the hand edit
    assert cli("sync", store=store).code == 0
    tracked = git(store, "ls-files", "records").split()
    assert (
        f"records/fact/{record_id}.md" in tracked and "records/fact/f-handmade00aaaa.md" in tracked
    )
    assert "\r" not in git(store, "show", f"HEAD:records/fact/{record_id}.md")


def test_leaked_git_variables_do_not_redirect_writes(store: Path, project: Path) -> None:
    """B44's class: memdir run from a project's git hook or under ``git -c``: its store only."""
    project_head = head(project)
    leaked = {
        "GIT_DIR": str(project / ".git"),
        "GIT_WORK_TREE": str(project),
        "GIT_INDEX_FILE": str(project / ".git" / "index"),
        "GIT_CONFIG_PARAMETERS": "'core.hookspath'='/nonexistent' 'commit.gpgsign'='true'",
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "user.useConfigOnly",
        "GIT_CONFIG_VALUE_0": "maybe",
        "GIT_AUTHOR_DATE": "not a date",
        "GIT_TRACE": "1",
    }
    record_id = remember(store, "The queue is SQS", env=leaked)
    assert head(project) == project_head and git(project, "status", "--porcelain") == ""
    assert last_commit_paths(store) == [f"records/fact/{record_id}.md"]


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the store to another user")
def test_store_owned_by_another_user_is_refused_and_diagnosed(
    store: Path, gitconfig: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """B44's class: a store another user owns (made with sudo, a shared folder): git refuses it."""
    remember(store, "The queue is SQS")
    monkeypatch.delenv("SUDO_UID", raising=False)
    for folder, dirs, files in os.walk(store):
        for name in [*dirs, *files]:
            os.chown(Path(folder) / name, 1000, 1000, follow_symlinks=False)
    os.chown(store, 1000, 1000)
    before = record_files(store)
    ran = cli("remember", "Deploys happen on Tuesdays", store=store)
    assert ran.code == 1 and "nothing was stored" in ran.err and "dubious ownership" in ran.err
    assert record_files(store) == before
    finding = next(f for f in health(store)["findings"] if f["code"] == "git_ownership")
    assert "safe.directory" in finding["fix"]
    gitconfig(f"[safe]\n\tdirectory = {store.resolve()}\n")  # the fix it names
    remember(store, "Deploys happen on Tuesdays")
    assert recalled(store, "Deploys") == ["Deploys happen on Tuesdays"]


# --- B59: a slow user hook does not slow memdir ------------------------------------------------


@pytest.mark.slow
def test_slow_reference_transaction_hook_does_not_slow_writes(
    store: Path, project: Path, tmp_path: Path, gitconfig: Callable[[str], Path]
) -> None:
    """B59: a user-wide ``reference-transaction`` hook that sleeps 3 s: writes take their time."""
    folder = hooks_dir(tmp_path, "sleep 3", ("reference-transaction", "post-index-change"))
    gitconfig(f"[core]\n\thooksPath = {folder}\n")
    ran = cli("remember", "The queue is SQS", store=store)
    assert ran.code == 0 and ran.seconds < 3, ran
    from tests.hooks.conftest import run_hook

    started = time.monotonic()
    run_hook(
        "UserPromptSubmit",
        {
            "session_id": "s1",
            "hook_event_name": "UserPromptSubmit",
            "cwd": str(project),
            "prompt": "remember that deploys happen on Tuesdays",
        },
        cwd=project,
    )
    assert time.monotonic() - started < 3
    assert any("Tuesdays" in t for t in recalled(store, "deploys Tuesdays"))


# --- B58: the store's git states ---------------------------------------------------------------


def _conflict(store: Path, record_id: str) -> tuple[str, str]:
    """Two branches that edit the same record differently; return (record path, other branch)."""
    rel = f"records/fact/{record_id}.md"
    branch = git(store, "branch", "--show-current").strip()
    git(store, "switch", "-qc", "other")
    path = store / rel
    path.write_text(path.read_text().replace("importance: 5", "importance: 2"))
    git(store, "commit", "-qam", "other edit")
    git(store, "switch", "-q", branch)
    path.write_text(path.read_text().replace("importance: 5", "importance: 8"))
    git(store, "commit", "-qam", "main edit")
    return rel, branch


def _merge(store: Path, record_id: str) -> str:
    _conflict(store, record_id)
    subprocess.run(["git", "-C", str(store), "merge", "-q", "other"], capture_output=True)
    return "git merge --abort"


def _rebase(store: Path, record_id: str) -> str:
    _conflict(store, record_id)
    subprocess.run(["git", "-C", str(store), "rebase", "-q", "other"], capture_output=True)
    return "git rebase --abort"


def _cherry_pick(store: Path, record_id: str) -> str:
    _conflict(store, record_id)
    subprocess.run(["git", "-C", str(store), "cherry-pick", "other"], capture_output=True)
    return "git cherry-pick --abort"


def _revert(store: Path, record_id: str) -> str:
    path = store / f"records/fact/{record_id}.md"
    path.write_text(path.read_text().replace("importance: 5", "importance: 8"))
    git(store, "commit", "-qam", "edit one")
    path.write_text(path.read_text().replace("importance: 8", "importance: 9"))
    git(store, "commit", "-qam", "edit two")
    subprocess.run(["git", "-C", str(store), "revert", "HEAD~1"], capture_output=True)
    return "git revert --abort"


def _detached(store: Path, record_id: str) -> str:
    git(store, "checkout", "-q", "HEAD~1")
    return "git switch -"


def _bisect(store: Path, record_id: str) -> str:
    git(store, "bisect", "start", "HEAD", "HEAD~2")
    return "git bisect reset"


def _unmerged(store: Path, record_id: str) -> str:
    """Unmerged paths with no operation in progress: a ``stash pop`` that conflicted."""
    path = store / f"records/fact/{record_id}.md"
    original = path.read_text()
    path.write_text(original.replace("importance: 5", "importance: 2"))
    git(store, "stash", "-q")
    path.write_text(original.replace("importance: 5", "importance: 8"))
    git(store, "commit", "-qam", "edit")
    subprocess.run(["git", "-C", str(store), "stash", "pop"], capture_output=True)
    return "git reset --merge"


STATES: dict[str, tuple[str, Callable[[Path, str], str]]] = {
    "merge": ("merge_in_progress", _merge),
    "rebase": ("rebase_in_progress", _rebase),
    "cherry-pick": ("cherry_pick_in_progress", _cherry_pick),
    "revert": ("revert_in_progress", _revert),
    "detached": ("detached_head", _detached),
    "bisect": ("bisect_in_progress", _bisect),
    "unmerged": ("unmerged_paths", _unmerged),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(STATES))
def test_store_git_state_refuses_writes_and_health_names_it(store: Path, name: str) -> None:
    """B58: each state a person leaves the store's git in: writes refused, health names it."""
    code, make = STATES[name]
    record_id = remember(store, "The queue is SQS")
    other = remember(store, "The cache is Redis")
    fix = make(store, record_id)
    before, files = git(store, "rev-parse", "HEAD").strip(), record_files(store)
    ran = cli("remember", "Deploys happen on Tuesdays", "--json", store=store)
    assert ran.code == 1, ran.out
    error = ran.json()["error"]
    assert error["code"] == "git_state", error
    assert fix.split()[1] in error["message"] and "nothing was stored" in error["message"]
    # a record present in the checked-out files (an old commit does not hold the newer one)
    target = record_id if name in ("detached", "bisect") else other
    for args in (("forget", target, "--reason", "x"), ("rollback", "HEAD", "--yes")):
        refused = cli(*args, store=store)
        assert refused.code == 1 and "Fix:" in refused.err, refused.err
    assert cli("purge", target, "--yes", store=store).code == 1
    assert (git(store, "rev-parse", "HEAD").strip(), record_files(store)) == (before, files)
    finding = next(f for f in health(store)["findings"] if f["code"] == code)
    assert finding["level"] == "error" and fix.split()[1] in finding["fix"]
    # the fix it names works, and then so does the write
    subprocess.run(["git", "-C", str(store), *fix.split()[1:]], capture_output=True, check=True)
    if name == "unmerged":
        git(store, "stash", "drop", "-q")
    remember(store, "Deploys happen on Tuesdays")
    assert health(store)["ok"]


def test_store_without_its_own_repository_never_commits_into_the_project(
    project: Path,
) -> None:
    """B58: a store folder whose ``.git`` is gone, inside a project: refused, project untouched."""
    store = project / "notes" / "mem"
    assert cli("init", "--store", str(store)).code == 0
    shutil.rmtree(store / ".git")
    project_head = head(project)
    ran = cli("remember", "The queue is SQS", "--json", store=store)
    assert ran.code == 1 and ran.json()["error"]["code"] == "git_state", ran.out
    assert "no git repository of its own" in ran.json()["error"]["message"]
    assert head(project) == project_head
    assert "no_repository" in codes(health(store))
    assert cli("init", "--store", str(store)).code == 0  # the fix it names
    remember(store, "The queue is SQS")
    assert head(project) == project_head


def test_store_inside_a_repository_that_does_not_ignore_it(project: Path) -> None:
    """B58: a store made inside a project's tree but not excluded there: health warns."""
    store = project / "notes" / "mem"
    assert cli("init", "--store", str(store)).code == 0
    remember(store, "The queue is SQS")
    report = health(store)
    finding = next(f for f in report["findings"] if f["code"] == "store_in_repository")
    assert str(project) in finding["message"] and "/notes/mem/" in finding["fix"]
    exclude = project / ".git" / "info" / "exclude"
    exclude.write_text(exclude.read_text() + "/notes/mem/\n")
    assert health(store)["ok"]


@pytest.mark.slow
def test_init_in_a_submodule_excludes_the_store(project: Path, tmp_path: Path) -> None:
    """B58: ``memdir init`` inside a submodule (its ``.git`` is a file) excludes the store."""
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    git(upstream, "init", "-q")
    (upstream / "lib.py").write_text("x = 1\n")
    git(upstream, "add", "lib.py")
    git(upstream, "commit", "-qm", "lib")
    git(
        project,
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        str(upstream),
        "vendor",
    )
    sub = project / "vendor"
    assert (sub / ".git").is_file()
    done = subprocess.run(
        [*MEMDIR, "init", "--json"], cwd=sub, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    made = json.loads(done.stdout)
    assert made["store"] == str((sub / ".memdir").resolve())
    assert made["excluded_in"] and Path(made["excluded_in"]).read_text().count("/.memdir/") == 1
    assert git(sub, "status", "--porcelain") == ""  # the submodule does not see the store
    remember(sub / ".memdir", "The queue is SQS")
    assert git(sub, "status", "--porcelain") == ""


@pytest.mark.slow
def test_purge_destroys_only_what_it_made_unreachable(store: Path) -> None:
    """B58's class: purge keeps a person's stashes and loose objects; erases the purged text."""
    keep = remember(store, "The queue is SQS")
    path = store / "records" / "fact" / f"{keep}.md"
    original = path.read_text()
    for value in ("2", "3"):
        path.write_text(original.replace("importance: 5", f"importance: {value}"))
        git(store, "stash", "-q")
    dangling = subprocess.run(
        ["git", "-C", str(store), "hash-object", "-w", "--stdin"],
        input="a person's dangling note\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    secret = remember(store, "The vault passphrase hint is orchid")
    remember(store, "The cache is Redis")
    versions = git(store, "rev-list", "--all", "--objects").splitlines()
    blob = next(line.split()[0] for line in versions if line.endswith(f"{secret}.md"))
    stashes = git(store, "stash", "list")
    ran = cli("purge", secret, "--yes", "--json", store=store)
    assert ran.code == 0, ran.err
    assert git(store, "stash", "list") == stashes and len(stashes.splitlines()) == 2
    assert git(store, "cat-file", "-t", dangling).strip() == "blob"
    missing = subprocess.run(["git", "-C", str(store), "cat-file", "-e", blob], check=False)
    assert missing.returncode != 0  # the purged text is gone from the object store
    assert "orchid" not in git(store, "log", "--all", "-p")
    git(store, "stash", "pop", "-q")
    assert "importance: 3" in path.read_text()


@pytest.mark.slow
def test_failed_purge_changes_nothing_and_can_be_run_again(store: Path, tmp_path: Path) -> None:
    """B45's class for purge: git fails while rewriting history: nothing is erased yet."""
    secret = remember(store, "The vault passphrase hint is orchid")
    before, files = head(store), record_files(store)
    ran = cli("purge", secret, "--yes", store=store, env=failing_git(tmp_path, "fast-import"))
    assert ran.code == 1 and "fast-import" in ran.err, ran.err
    assert (head(store), record_files(store)) == (before, files)
    assert recalled(store, "vault passphrase") == ["The vault passphrase hint is orchid"]
    assert cli("purge", secret, "--yes", store=store).code == 0
    assert recalled(store, "vault passphrase") == []
    assert "orchid" not in git(store, "log", "--all", "-p")


# --- B60: --store advice that would turn the project into a store ------------------------------


def test_store_advice_names_the_memdir_folder_and_init_refuses_a_project(project: Path) -> None:
    """B60: ``--store <project root>``: advice names ``.memdir``; init there is refused."""
    ran = cli("remember", "x", store=project)
    assert ran.code == 1
    assert f"{project / '.memdir'}" in ran.err and f"init --store {project}`" not in ran.err
    project_head = head(project)
    refused = cli("init", "--store", str(project))
    assert refused.code == 2 and "working tree of a git repository" in refused.err
    assert not (project / "memdir.toml").exists() and head(project) == project_head
    inside = project / "docs"
    inside.mkdir()
    (inside / "a.md").write_text("a\n")
    git(project, "add", "docs/a.md")
    git(project, "commit", "-qm", "docs")
    project_head = head(project)
    assert cli("init", "--store", str(inside)).code == 2
    # the advice, followed, works: the project's store is its .memdir folder
    done = subprocess.run([*MEMDIR, "init"], cwd=project, capture_output=True, check=False)
    assert done.returncode == 0
    remember(project / ".memdir", "x is a fact")
    assert head(project) == project_head
