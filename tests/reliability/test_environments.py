"""Legal but unusual environments: encodings, locales, time zones, long paths, read-only stores.

Every case runs the real ``memdir`` in a subprocess with the environment a user's machine
gives it (cases B52, B53, B57 in ``shared/cases``): a stdout that cannot encode CJK, a POSIX
locale, ``TZ`` offsets of a whole day, a project root near the OS path limit, a store the user
cannot write to, file names that are not UTF-8.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import git

MEMDIR = [sys.executable, "-m", "memdir"]
CJK_TEXT = "配色方案是红色主题"


def memdir(
    cwd: Path, *args: str, env: dict[str, str] | None = None, user: list[str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run ``memdir ARGS`` in ``cwd`` with extra ``env``; assert no traceback reached stderr.

    Args:
        cwd: The working directory (a project).
        args: The command line after ``memdir``.
        env: Variables added to (or, with the value ``""``, removed from) the environment.
        user: A command prefix that runs memdir as another user (``setpriv …``).

    Returns:
        The finished process, its output as bytes (decoded by each test as it needs).
    """
    full = dict(os.environ)
    for name, value in (env or {}).items():
        if value:
            full[name] = value
        else:
            full.pop(name, None)
    done = subprocess.run(
        [*(user or []), *MEMDIR, *args], cwd=cwd, env=full, capture_output=True, check=False
    )
    assert b"Traceback" not in done.stderr, done.stderr.decode("utf-8", "replace")
    assert b"Traceback" not in done.stdout, done.stdout.decode("utf-8", "replace")
    return done


def _cjk_record(project: Path) -> str:
    done = memdir(project, "remember", CJK_TEXT, "--json")
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["id"])


# --- B52: text output on any stdout, arguments in any locale ------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("encoding", ["cp1252", "cp437", "latin-1"])
def test_a_stdout_that_cannot_encode_cjk_still_gets_every_answer(
    store: Path, project: Path, encoding: str
) -> None:
    record = _cjk_record(project)
    env = {"PYTHONIOENCODING": encoding}

    listed = memdir(project, "list", env=env)
    assert listed.returncode == 0
    assert record.encode() in listed.stdout  # the row is there, its text escaped or readable

    for command in (["recall", "配色", "--json"], ["list", "--json"], ["get", record, "--json"]):
        done = memdir(project, *command, env=env)
        assert done.returncode == 0, (command, done.stderr)
        answer = json.loads(done.stdout.decode(encoding))  # valid JSON in the stream's encoding
        texts = [r["text"] for r in answer["results"]] if "results" in answer else [answer["text"]]
        assert CJK_TEXT in texts, (command, answer)  # escaped exactly: the same text comes back


@pytest.mark.slow
def test_an_error_about_cjk_text_on_a_cp1252_stdout_is_a_clean_json_error(
    store: Path, project: Path
) -> None:
    done = memdir(project, "get", "f-不存在", "--json", env={"PYTHONIOENCODING": "cp1252"})
    assert done.returncode in (2, 4)
    assert "error" in json.loads(done.stdout.decode("cp1252"))


@pytest.mark.slow
def test_utf8_arguments_are_read_in_a_posix_locale(store: Path, project: Path) -> None:
    record = _cjk_record(project)
    posix = {"LC_ALL": "POSIX", "PYTHONUTF8": "0", "LANG": "", "PYTHONIOENCODING": ""}

    found = memdir(project, "recall", "红色主题", "--json", env=posix)
    assert found.returncode == 0, found.stderr
    answer = json.loads(found.stdout)
    assert answer["query"] == "红色主题"
    assert [r["id"] for r in answer["results"]] == [record]

    written = memdir(project, "remember", "部署在周五", "--json", env=posix)
    assert written.returncode == 0, written.stderr
    assert json.loads(written.stdout)["text"] == "部署在周五"  # stored as text, not as escapes


@pytest.mark.slow
def test_an_argument_that_is_not_utf8_is_refused_as_usage(store: Path, project: Path) -> None:
    done = subprocess.run(
        [*MEMDIR, "recall", b"caf\xe9".decode("utf-8", "surrogateescape")],
        cwd=project,
        capture_output=True,
        check=False,
        env={**os.environ, "LC_ALL": "POSIX", "PYTHONUTF8": "0"},
    )
    assert done.returncode == 2
    assert b"not valid UTF-8" in done.stderr
    assert b"Traceback" not in done.stderr


# --- B57: any valid TZ -------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("zone", ["UTC+24", "UTC-24", "XYZ+167", "<+2459>-24:59"])
def test_a_write_works_under_any_legal_tz(store: Path, project: Path, zone: str) -> None:
    text = f"the release train leaves under zone {zone}"
    done = memdir(project, "remember", text, "--json", env={"TZ": zone})
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["created_at"].endswith("Z")

    # Durable and consistent: committed, indexed, recalled, and health is clean.
    assert not git(store, "status", "--porcelain", "--", "records")
    recalled = memdir(project, "recall", "release train zone", "--json", env={"TZ": zone})
    assert record["id"] in [r["id"] for r in json.loads(recalled.stdout)["results"]]
    health = memdir(project, "health", "--json", env={"TZ": zone})
    assert health.returncode == 0, health.stdout


@pytest.mark.slow
def test_a_naive_time_under_a_whole_day_offset_is_read_as_local_time(
    store: Path, project: Path
) -> None:
    from datetime import UTC, datetime, timedelta

    # TZ=UTC+24 is 24 hours behind UTC: local midnight of a day is midnight UTC the next day.
    day = (datetime.now(UTC) - timedelta(days=10)).date()
    at = f"{day.isoformat()}T00:00"
    done = memdir(
        project, "journal", "user", "the audit ran", "--at", at, "--json", env={"TZ": "UTC+24"}
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["file"].endswith(f"{day + timedelta(days=1)}.jsonl")


# --- B53: project paths up to the limit, or a clear refusal at init -----------------------------


def _deep(base: Path, index_bytes: int, segment: str) -> Path:
    """A folder under ``base`` whose ``.memdir/index.sqlite`` path is ``index_bytes`` long."""
    tail = len("/.memdir/index.sqlite")
    left = index_bytes - len(os.fsencode(base)) - tail
    piece = segment * (60 // len(segment.encode()))  # a 60-byte folder name
    folder = base
    while left > 2 * (len(piece.encode()) + 1):
        folder = folder / piece
        left -= len(piece.encode()) + 1
    folder = folder / ("x" * (left - 1))  # the rest, to the exact byte
    folder.mkdir(parents=True)
    assert len(os.fsencode(folder / ".memdir" / "index.sqlite")) == index_bytes
    return folder


def _git_project(folder: Path) -> Path:
    git(folder, "init", "-q")
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("segment", ["d", "配"])  # 1-byte and 3-byte characters
def test_a_project_root_past_sqlites_limit_is_refused_at_init_with_nothing_created(
    tmp_path: Path, segment: str
) -> None:
    from memdir.kernel.index import max_index_path_bytes

    project = _git_project(_deep(tmp_path, max_index_path_bytes() + 12, segment))
    done = memdir(project, "init")
    assert done.returncode == 1
    assert b"bytes SQLite can open" in done.stderr and b"shorter path" in done.stderr
    assert not (project / ".memdir").exists()  # never "created" and then failing

    errors = memdir(project, "remember", "x", "--json")
    assert errors.returncode != 0 and "error" in json.loads(errors.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("segment", ["d", "配"])
def test_a_project_root_at_the_limit_works_end_to_end(tmp_path: Path, segment: str) -> None:
    from memdir.kernel.index import max_index_path_bytes

    project = _git_project(_deep(tmp_path, max_index_path_bytes(), segment))
    assert memdir(project, "init").returncode == 0
    written = memdir(project, "remember", "The long path keeps its beliefs", "--json")
    assert written.returncode == 0, written.stderr
    found = memdir(project, "recall", "long path beliefs", "--json")
    assert [r["id"] for r in json.loads(found.stdout)["results"]] == [
        json.loads(written.stdout)["id"]
    ]
    assert memdir(project, "health").returncode == 0


# --- B57: a read-only store answers every read --------------------------------------------------


def _read_only_runner(store: Path) -> list[str]:
    """A command prefix that runs a command with ``store`` mounted read-only.

    As root (permission bits do not stop root) it is a private mount namespace with a
    read-only bind mount of the store; otherwise the store is made unwritable with chmod.
    """
    if os.geteuid() != 0:
        for folder, dirs, files in os.walk(store):
            for name in [*dirs, *files]:
                path = Path(folder) / name
                path.chmod(path.stat().st_mode & ~0o222)
        store.chmod(store.stat().st_mode & ~0o222)
        return []
    script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", script, str(store), "true"], capture_output=True, check=False
    )
    if probe.returncode != 0:
        pytest.skip(f"no read-only bind mount here: {probe.stderr.decode(errors='replace')}")
    return ["unshare", "-m", "sh", "-c", script, str(store)]


def _snapshot(store: Path) -> dict[str, tuple[int, int]]:
    return {
        str(path.relative_to(store)): (path.stat().st_size, path.stat().st_mtime_ns)
        for path in store.rglob("*")
        if path.is_file()
    }


@pytest.mark.slow
def test_a_read_only_store_answers_recall_get_list_log_and_health(
    store: Path, project: Path
) -> None:
    record = _cjk_record(project)
    other = json.loads(memdir(project, "remember", "The queue is SQS", "--json").stdout)["id"]
    before = _snapshot(store)
    user = _read_only_runner(store)

    found = memdir(project, "recall", "queue", "--json", user=user)
    assert found.returncode == 0, found.stderr
    assert [r["id"] for r in json.loads(found.stdout)["results"]] == [other]
    got = memdir(project, "get", record, "--json", user=user)
    assert got.returncode == 0 and json.loads(got.stdout)["text"] == CJK_TEXT
    listed = memdir(project, "list", "--json", user=user)
    assert {r["id"] for r in json.loads(listed.stdout)["results"]} == {record, other}
    log = memdir(project, "log", "--json", user=user)
    assert log.returncode == 0, log.stderr
    assert other in log.stdout.decode()
    health = memdir(project, "health", "--json", user=user)
    assert health.returncode == 0, health.stdout
    report = json.loads(health.stdout)
    assert "read_only" in {f["code"] for f in report["findings"]}

    refused = memdir(project, "remember", "A write to a read-only store", "--json", user=user)
    assert refused.returncode != 0 and "error" in json.loads(refused.stdout)
    assert _snapshot(store) == before  # nothing was written, not even the index


# --- non-UTF-8 file names are reported by name -------------------------------------------------


@pytest.mark.slow
def test_a_file_name_that_is_not_utf8_is_reported_by_name_by_scan(
    store: Path, project: Path
) -> None:
    (project / "src").mkdir()
    (project / "src" / "ok.py").write_text("def ok():\n    return 1\n")
    with open(os.fsencode(project / "src") + b"/caf\xe9.py", "w") as handle:
        handle.write("def latin():\n    return 2\n")

    done = memdir(project, "scan", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["not_utf8"] == ["src/caf\\xe9.py"]
    assert report["skipped"]["name not UTF-8"] == 1
    anatomy = json.loads((store / "anatomy.json").read_text(encoding="utf-8"))
    assert "src/ok.py" in anatomy["files"]  # the rest of the project is mapped

    text = memdir(project, "scan")
    assert "src/caf\\xe9.py" in text.stdout.decode() and "rename" in text.stdout.decode()


@pytest.mark.slow
def test_a_cjk_project_root_works_in_a_posix_locale_for_the_cli_and_hooks(tmp_path: Path) -> None:
    posix = {"LC_ALL": "POSIX", "PYTHONUTF8": "0", "LANG": "", "PYTHONIOENCODING": ""}
    project = tmp_path / "项目"
    project.mkdir()
    git(project, "init", "-q")
    assert memdir(project, "init", env=posix).returncode == 0
    written = memdir(project, "remember", "部署在周五", "--json", env=posix)
    assert written.returncode == 0, written.stderr
    health = memdir(project, "health", "--json", env=posix)
    assert json.loads(health.stdout)["store"] == str(project / ".memdir")  # named as it is

    (project / "模块.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    payload = {
        "session_id": "posix",
        "hook_event_name": "PostToolUse",
        "cwd": str(project),
        "tool_name": "Read",
        "tool_input": {"file_path": str(project / "模块.py")},
        "tool_response": {},
    }
    full = {**os.environ, "LC_ALL": "POSIX", "PYTHONUTF8": "0"}
    full.pop("LANG", None)
    done = subprocess.run(
        [*MEMDIR, "hook", "PostToolUse"],
        input=json.dumps(payload).encode(),
        cwd=project,
        env=full,
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0 and done.stdout == b""
    rows = [
        json.loads(line)
        for path in (project / ".memdir" / "actions").glob("*.jsonl")
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    assert [row["path"] for row in rows] == ["模块.py"]  # the hook found its project and file
