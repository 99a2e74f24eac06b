"""Architecture contracts that import-linter cannot see: what actually loads at run time."""

import json
import subprocess
import sys

HEAVY = {"click", "yaml", "mcp", "pydantic", "httpx"}


def _loaded(code: str) -> set[str]:
    probe = code + "\nimport json, sys; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout.splitlines()[-1]))


def test_the_kernel_imports_only_the_standard_library() -> None:
    loaded = _loaded(
        "import memdir.kernel.storage.lifecycle, memdir.kernel.index.recall, memdir.kernel.storage.journal, "
        "memdir.kernel.storage.txn, memdir.kernel.base.caller"
    )
    third_party = {m.split(".")[0] for m in loaded} & HEAVY
    assert third_party == set()
    assert not any(m.startswith(("memdir.cli", "memdir.store", "memdir.records")) for m in loaded)


def test_version_answers_before_any_third_party_import() -> None:
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "memdir", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.startswith("memdir, version")
    imported = {line.split("|")[-1].strip().split(".")[0] for line in out.stderr.splitlines()}
    assert imported & HEAVY == set()


def test_the_hook_path_imports_nothing_heavy() -> None:
    loaded = _loaded(
        "import sys; sys.argv = ['memdir', 'hook', 'SessionStart'];"
        "import memdir.__main__, memdir.hooks.dispatch, memdir.hooks.session_start,"
        " memdir.hooks.prompt_submit, memdir.hooks.pre_tool_use, memdir.hooks.post_tool_use,"
        " memdir.hooks.stop, memdir.hooks.compaction, memdir.hooks.session_end,"
        " memdir.hooks.post_tool_batch"
    )
    assert {m.split(".")[0] for m in loaded} & HEAVY == set()
    assert not any(
        m.startswith(("memdir.cli", "memdir.service", "memdir.store", "memdir.records"))
        for m in loaded
    )


def test_the_hot_path_events_skip_typing_dataclasses_and_toml() -> None:
    loaded = _loaded(
        "import memdir.hooks.dispatch, memdir.hooks.pre_tool_use, memdir.hooks.post_tool_use"
    )
    assert {"typing", "dataclasses", "tomllib", "sqlite3", "secrets", "signal"} & loaded == set()
