"""The Claude Code auto-memory mirror: created, updated, skipped, unlinked, capped, never foreign."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from memdir import service
from memdir.kernel.index import Index, digest
from memdir.store import mirror
from tests.conftest import run_cli


def _mirror(store: Path, *args: str) -> dict[str, Any]:
    result = run_cli("mirror", "claude", "--store", str(store), "--json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_slug_is_claude_codes_own() -> None:
    assert mirror.claude_slug(Path("/home/ann/src/my_app.v2")) == "-home-ann-src-my-app-v2"
    long = Path("/" + "a" * 250)
    slug = mirror.claude_slug(long)
    # Claude Code: first 200 characters, "-", base-36 of |Java string hash| of the path.
    h = 0
    for ch in str(long):
        h = (h * 31 + ord(ch)) & 0xFFFFFFFF
    h = abs(h - (1 << 32) if h >= 1 << 31 else h)
    digits = ""
    while h:
        h, r = divmod(h, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[r] + digits
    assert slug == "-" + "a" * 199 + "-" + digits


def test_mirror_creates_one_file_per_kind_in_claudes_folder(
    store: Path, isolated_env: Path
) -> None:
    rule = service.remember(store, "Never force-push to main", kind="rule").record
    pref = service.remember(store, "Use pnpm, not npm", kind="preference").record
    service.remember(store, "The API is served by FastAPI", kind="fact")
    out = _mirror(store)
    folder = isolated_env / ".claude" / "projects" / mirror.claude_slug(store.parent) / "memory"
    assert out["directory"] == str(folder)
    rules = (folder / "memdir_rules.md").read_text()
    prefs = (folder / "memdir_preferences.md").read_text()
    assert f"- Never force-push to main ({rule.id})" in rules
    assert f"- Use pnpm, not npm ({pref.id})" in prefs
    assert "type: feedback" in rules and "memdir_hash: " in rules
    assert "FastAPI" not in rules + prefs
    assert sorted(p.name for p in folder.iterdir()) == ["memdir_preferences.md", "memdir_rules.md"]
    assert mirror.is_ours(folder / "memdir_rules.md")


def test_update_rewrites_only_what_changed_and_skips_identical(store: Path) -> None:
    target = store.parent / "cc-memory"
    service.remember(store, "Never force-push to main", kind="rule")
    service.remember(store, "Use pnpm, not npm", kind="preference")
    _mirror(store, "--dir", str(target))
    prefs = target / "memdir_preferences.md"
    before = prefs.stat().st_mtime_ns
    os.utime(prefs, ns=(before - 10**9, before - 10**9))
    again = _mirror(store, "--dir", str(target))
    assert again["written"] == [] and len(again["unchanged"]) == 2
    # A new rule reaches the mirror at the next write, through any memdir command.
    service.remember(store, "Never commit generated stores", kind="rule")
    assert "Never commit generated stores" in (target / "memdir_rules.md").read_text()
    assert prefs.stat().st_mtime_ns == before - 10**9  # preferences file untouched


def test_correct_reject_forget_reach_the_mirror_and_an_empty_kind_is_unlinked(
    store: Path,
) -> None:
    target = store.parent / "cc-memory"
    rule = service.remember(store, "Deploy on Tuesdays", kind="rule").record
    pref = service.remember(store, "Tabs for indentation", kind="preference").record
    _mirror(store, "--dir", str(target))
    service.correct(store, rule.id, "Deploy on Wednesdays", reason="moved")
    text = (target / "memdir_rules.md").read_text()
    assert "Deploy on Wednesdays" in text and "Tuesdays" not in text
    service.reject(store, pref.id, "wrong")
    assert not (target / "memdir_preferences.md").exists()
    assert (target / "memdir_rules.md").exists()  # the right thing is still there
    new_rule = next(r for r in service.list_records(store) if r.text == "Deploy on Wednesdays")
    service.forget(store, new_rule.id, "no longer true")
    assert not (target / "memdir_rules.md").exists()


def test_never_touches_files_it_did_not_write(store: Path) -> None:
    target = store.parent / "cc-memory"
    target.mkdir()
    foreign = target / "memdir_rules.md"
    foreign.write_text("---\nname: my own notes\n---\nkeep me\n")
    other = target / "MEMORY.md"
    other.write_text("- [notes](notes.md)\n")
    service.remember(store, "Never force-push to main", kind="rule")
    service.remember(store, "Use pnpm", kind="preference")
    out = _mirror(store, "--dir", str(target))
    assert out["foreign"] == [str(foreign)]
    assert foreign.read_text() == "---\nname: my own notes\n---\nkeep me\n"
    assert other.read_text() == "- [notes](notes.md)\n"
    assert "Use pnpm" in (target / "memdir_preferences.md").read_text()
    # A mirror file edited by hand is no longer memdir's: left alone, even when its kind empties.
    prefs = target / "memdir_preferences.md"
    prefs.write_text(prefs.read_text() + "- my own line\n")
    pref = next(r for r in service.list_records(store) if r.text == "Use pnpm")
    service.forget(store, pref.id, "gone")
    assert prefs.exists() and "- my own line" in prefs.read_text()
    off = _mirror(store, "--off")
    assert str(prefs) in off["foreign"] and prefs.exists() and foreign.exists()


def test_size_cap_drops_the_least_relevant_first_and_says_so(store: Path) -> None:
    target = store.parent / "cc-memory"
    keep = service.remember(
        store, "Never run migrations on Fridays", kind="rule", importance=10
    ).record
    for n in range(60):
        service.remember(
            store,
            f"Rule number {n} about module {n} needs care with its own words",
            kind="rule",
            importance=3,
        )
    result = run_cli("mirror", "claude", "--store", str(store), "--dir", str(target))
    assert result.exit_code == 0, result.output
    assert "dropped" in result.stdout and "4 KB" in result.stdout
    data = (target / "memdir_rules.md").read_bytes()
    assert len(data) <= mirror.LIMIT_BYTES
    assert keep.id in data.decode()  # the most important one stays
    assert b"more in memdir" in data
    out = _mirror(store, "--dir", str(target))
    assert 0 < len(out["dropped"]) < 61 and keep.id not in out["dropped"]


@pytest.mark.parametrize("mirrored", [False, True])
def test_digest_leaves_out_what_the_mirror_carries(store: Path, mirrored: bool) -> None:
    rule = service.remember(store, "Never force-push to main", kind="rule").record
    fact = service.remember(store, "The demo project uses Postgres", kind="fact").record
    if mirrored:
        _mirror(store, "--dir", str(store.parent / "cc-memory"))
    ids = digest.mirrored_ids(store)
    index = Index(store)
    try:
        text = digest.session_digest(index, project=store.parent, mirrored=ids).text
    finally:
        index.close()
    assert fact.id in text  # the rest of the digest is there either way
    if mirrored:
        assert ids == {rule.id}
        assert rule.id not in text and "Never force-push" not in text
        assert "auto-memory" in text
    else:
        assert ids == frozenset()
        assert rule.id in text and "Never force-push" in text
    _mirror(store, "--off")
    assert digest.mirrored_ids(store) == frozenset()


def test_session_start_hook_skips_mirrored_rules_for_claude_only(
    store: Path, memdir_exe: list[str]
) -> None:
    import subprocess

    rule = service.remember(store, "Never force-push to main", kind="rule").record
    _mirror(store, "--dir", str(store.parent / "cc-memory"))

    def start(host: str) -> str:
        payload = {
            "session_id": f"s-{host}",
            "hook_event_name": "SessionStart",
            "source": "startup",
            "cwd": str(store.parent),
        }
        done = subprocess.run(
            [*memdir_exe, "hook", "SessionStart", "--host", host],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            cwd=store.parent,
            env={**os.environ, "CLAUDE_PROJECT_DIR": str(store.parent)},
            check=True,
        )
        return done.stdout

    assert rule.id not in start("claude-code")
    assert rule.id in start("codex")


@pytest.mark.slow
def test_install_mirror_option_turns_it_on_and_uninstall_off(
    project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(project)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cc"))
    result = run_cli("install", "--host", "claude-code", "--mirror", "--json")
    assert result.exit_code == 0, result.output
    store = project / ".memdir"
    folder = tmp_path / "cc" / "projects" / mirror.claude_slug(project) / "memory"
    assert json.loads(result.stdout)["mirror"]["directory"] == str(folder)
    assert mirror.enabled(store) and not folder.exists()  # on, nothing to mirror yet
    service.remember(store, "Never force-push to main", kind="rule")
    assert "Never force-push" in (folder / "memdir_rules.md").read_text()
    assert run_cli("uninstall", "--host", "claude-code").exit_code == 0
    assert not mirror.enabled(store) and not (folder / "memdir_rules.md").exists()
    wrong = run_cli("install", "--host", "codex", "--mirror")
    assert wrong.exit_code == 2 and "claude-code" in wrong.output


@pytest.mark.slow
def test_the_folder_is_the_one_claude_code_itself_creates(
    tmp_path: Path, isolated_env: Path
) -> None:
    """Run the pinned Claude Code (its model unreachable) and find the memory folder it makes."""
    import subprocess
    import time

    claude = Path(os.environ.get("MEMDIR_HOSTS_PREFIX", "/opt/memdir-hosts"))
    claude = claude / "node_modules" / ".bin" / "claude"
    if not claude.exists():
        pytest.skip("Claude Code is not installed here (.ci/install-hosts)")
    project = tmp_path / "a b" / "my_app.v2"
    (project / "sub").mkdir(parents=True)
    subprocess.run(["git", "-C", str(project), "init", "-q"], check=True)
    env = {
        **os.environ,
        "HOME": str(isolated_env),
        "ANTHROPIC_API_KEY": "sk-test-unused",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",  # nothing listens: no model, no network
    }
    env.pop("CLAUDE_CONFIG_DIR", None)
    proc = subprocess.Popen(
        [str(claude), "-p", "hi"],
        cwd=project / "sub",
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 45
        found: list[Path] = []
        while time.monotonic() < deadline and not found:
            time.sleep(0.5)
            found = sorted((isolated_env / ".claude" / "projects").glob("*/memory"))
    finally:
        import signal

        os.killpg(proc.pid, signal.SIGKILL)  # its own process group (start_new_session)
        proc.wait()
    assert found == [mirror.claude_memory_dir(project, env)]  # keyed on the git root, not sub/
