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
