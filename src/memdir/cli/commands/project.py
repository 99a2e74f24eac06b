"""Project commands: install, uninstall, hosts, scan, find, map, stats, sync."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from memdir.cli.output import emit, json_option, resolve, store_option
from memdir.hosts import HOSTS
from memdir.kernel.lang.text import truncate
from memdir.service import project

HOST_CHOICE = click.Choice(sorted(HOSTS))


def _has_personal_files(host: str) -> bool:
    """Whether a host's default install writes personal files (kept out of git)."""
    spec = HOSTS.get(host)
    return bool(spec and spec.personal.get("exclude"))


def _scope_label(host: str, scope: str) -> str:
    """Name the files an install wrote: personal ones, or the project's when the host has none."""
    if scope in ("personal", "project") and not _has_personal_files(host):
        title = HOSTS[host].title
        return f"project files: {title} has no personal project scope"
    return f"{scope} files"


def _files_line(files: dict[str, Any]) -> str:
    """Return a scope's hook, MCP and instruction files, each named once."""
    named = [files.get(k) for k in ("hooks", "plugin", "mcp", "instructions")]
    return ", ".join(dict.fromkeys(str(n) for n in named if n))


def _render_plan(v: dict[str, Any], verb: str) -> str:
    lines = [f"created the memdir store {v['created_store']}"] if v.get("created_store") else []
    if not v["changed"]:
        lines.append(f"{verb}: nothing to change for {v['host']} in {v['dir']}")
    else:
        scope = f" ({_scope_label(v['host'], v['scope'])})" if verb == "installed" else ""
        lines += [f"{verb} {v['host']} in {v['dir']}{scope}:"]
        lines += [f"  {c['path']}: {c['change']}" for c in v["changed"]]
    lines += [f"warning: {w}" for w in v.get("warnings", [])]
    if v.get("next_steps"):
        lines.append("before it works, you must:")
        lines += [f"  - {step}" for step in v["next_steps"]]
    return "\n".join(lines)


_dir_option = click.option(
    "--dir",
    "directory",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="The project folder (default: the top of the checkout holding the current folder).",
)


@click.command()
@click.option("--host", required=True, type=HOST_CHOICE, help="The coding agent to wire up.")
@click.option(
    "--shared",
    is_flag=True,
    help="Write the team's committed files (with a PATH-resolved `memdir`), not personal ones.",
)
@click.option(
    "--mirror",
    is_flag=True,
    help="Claude Code: also mirror the owner's rules and preferences into its auto-memory "
    "(`memdir mirror claude`).",
)
@_dir_option
@json_option
def install(host: str, shared: bool, mirror: bool, directory: Path | None, as_json: bool) -> None:
    """Wire memdir into a host: hooks, MCP server entry, instruction block.

    By default the install is personal: nothing it writes into a file your team
    commits names a path of this machine (Claude Code: .claude/settings.local.json,
    the local MCP scope, CLAUDE.local.md). --shared writes the team's files
    (.claude/settings.json, .mcp.json, CLAUDE.md, …) running `memdir` from PATH.
    Creates the store if needed; idempotent; edits keep your formatting; a
    malformed host config is left byte-identical and the command fails.
    `memdir uninstall` removes exactly what this added; `memdir doctor` checks
    the host will really run it.

    \b
    Example:
        memdir install --host claude-code
        memdir install --host codex --shared
        memdir install --host claude-code --mirror
    """
    if mirror and host != "claude-code":
        raise click.UsageError("--mirror is for --host claude-code (its auto-memory folder)")
    root = project.install_dir(directory)
    plan = project.install(root, host, shared=shared)
    out = plan.to_json()
    if mirror:
        from memdir.kernel.storage.paths import STORE_DIRNAME
        from memdir.service import portable

        out["mirror"] = portable.mirror_claude(root / STORE_DIRNAME).to_json()

    def render(v: dict[str, Any]) -> str:
        text = _render_plan(v, "installed")
        if "mirror" in v:
            text += f"\nmirroring rules and preferences into {v['mirror']['directory']}"
        return text

    emit(out, as_json=as_json, render=render)


@click.command()
@click.option("--host", required=True, type=HOST_CHOICE, help="The coding agent to unwire.")
@_dir_option
@json_option
def uninstall(host: str, directory: Path | None, as_json: bool) -> None:
    """Remove exactly what `memdir install` added for a host (personal and shared).

    For Claude Code it also turns the auto-memory mirror off (memdir's own files only).

    \b
    Example:
        memdir uninstall --host claude-code
    """
    root = project.install_dir(directory)
    plan = project.install(root, host, remove=True)
    out = plan.to_json()
    if host == "claude-code":
        from memdir.kernel.storage.paths import STORE_DIRNAME
        from memdir.service import portable

        if (root / STORE_DIRNAME).is_dir() and portable.mirror_enabled(root / STORE_DIRNAME):
            out["mirror"] = portable.mirror_claude(root / STORE_DIRNAME, off=True).to_json()
    emit(out, as_json=as_json, render=lambda v: _render_plan(v, "uninstalled"))


@click.command()
@json_option
def hosts(as_json: bool) -> None:
    """List the hosts memdir knows, the hook events each fires, and its trust steps.

    \b
    Example:
        memdir hosts
    """

    def render(v: dict[str, Any]) -> str:
        lines = []
        for row in v["results"]:
            fired = [e for e, name in row["events"].items() if name]
            missing = [e for e, name in row["events"].items() if not name]
            state = "install" if row["installable"] else "listed"
            lines.append(f"{row['host']:<12} {state:<8} {row['title']}")
            lines.append(f"    events: {', '.join(fired)}")
            if missing:
                lines.append(f"    lacks:  {', '.join(missing)} (memdir loses only those features)")
            if row["installable"]:
                if _has_personal_files(row["host"]):
                    lines.append(f"    personal: {_files_line(row['personal'])}")
                else:
                    lines.append(
                        f"    default:  {_files_line(row['personal'])} "
                        "(project files: this host has no personal project scope)"
                    )
                lines.append(f"    --shared: {_files_line(row['shared'])}")
            for gate in row["gates"]:
                lines.append(f"    trust:  {gate}")
            if row.get("loses"):
                lines.append(f"    loses:  {row['loses']}")
            if row["notes"]:
                lines.append(f"    note:   {row['notes']}")
        return "\n".join(lines)

    emit({"results": project.hosts()}, as_json=as_json, render=render)


@click.command()
@_dir_option
@click.option(
    "--timeout",
    type=click.FloatRange(1, 600),
    default=30.0,
    show_default=True,
    help="Seconds to wait for each host command.",
)
@json_option
def doctor(directory: Path | None, timeout: float, as_json: bool) -> None:
    """Check each installed host will really run memdir's hooks and reach its server.

    Checks memdir's wiring in the host's files (a host may rewrite them and
    drop entries), that the hook command can be found, and asks the host
    itself (`claude mcp get memdir`, Codex's hooks/list trust status and
    `codex mcp list`, `gemini mcp list`). Never writes a host's trust store,
    and undoes what a host writes into the project while asked (OpenCode's
    `$schema` and `.opencode/` package files).
    Exits 1 when a host will not run memdir, saying how to repair it. A host
    it could not ask (its CLI not on PATH) is reported "UNKNOWN: could not
    ask the host": not a pass, but not a definite failure, so it exits 0.

    \b
    Example:
        memdir doctor
    """
    folder = project.install_dir(directory)
    reports = project.doctor(folder, timeout=timeout)

    def render(v: dict[str, Any]) -> str:
        if not v["results"]:
            return f"memdir is not installed into any host in {v['dir']} (memdir install --host H)"
        lines = []
        for report in v["results"]:
            verdict = {
                True: "works",
                False: "WILL NOT WORK",
                None: "UNKNOWN: could not ask the host",
            }[report["ok"]]
            lines.append(f"{report['title']} ({report['scope']} install): {verdict}")
            for check in report["checks"]:
                mark = {True: "ok  ", False: "FAIL", None: "??  "}[check["ok"]]
                lines.append(f"  {mark} {check['check']}: {check['detail']}")
                if check["fix"] and check["ok"] is not True:
                    lines.append(f"       fix: {check['fix']}")
        return "\n".join(lines)

    emit({"dir": str(folder), "results": reports}, as_json=as_json, render=render)
    if any(report["ok"] is False for report in reports):
        raise SystemExit(1)


@click.command()
@click.option("--full", is_flag=True, help="Read every file again, not only the changed ones.")
@store_option
@json_option
def scan(full: bool, store: Path | None, as_json: bool) -> None:
    """Build the project's file map (anatomy.json and anatomy.md in the store).

    Respects .gitignore; never enters virtualenvs, dependency, vendored or build
    trees; never follows a symlink out of the project; never lists secret files.
    Only files whose size or modification time changed since the last map are
    read again (--full reads all); those changed outside the agent (a pull, an
    editor, a branch switch) are listed.

    \b
    Example:
        memdir scan
        memdir scan --full
    """
    result = project.scan(resolve(store), full=full)

    def render(v: dict[str, Any]) -> str:
        skipped = ", ".join(f"{n} {why}" for why, n in v["skipped"].items()) or "none"
        text = f"mapped {v['files']} files in {v['seconds']} s; skipped: {skipped}"
        c = v["counts"]
        if v["unchanged"] or any(c.values()):
            text += (
                f"\n{v['unchanged']} unchanged (not read); {c['changed']} changed, "
                f"{c['added']} new, {c['removed']} gone since the last map"
            )
            if v["changed"]:
                text += "\nchanged outside the agent: " + ", ".join(v["changed"][:20])
        names = v.get("not_utf8") or []
        if names:  # named, so the person can rename them: they cannot appear in the map
            text += "\nnot mapped, name not UTF-8 (rename to map): " + ", ".join(names)
        return text

    emit(result.to_json(), as_json=as_json, render=render)


@click.command()
@click.argument("query")
@click.option(
    "-n",
    "--limit",
    type=click.IntRange(1, 500),
    default=20,
    show_default=True,
    help="Most files to list.",
)
@store_option
@json_option
def find(query: str, limit: int, store: Path | None, as_json: bool) -> None:
    """Find project files by path, symbol names and description (from the file map).

    \b
    Example:
        memdir find "store lock"
    """
    found = project.find(resolve(store), query, limit)
    emit(
        {"results": found},
        as_json=as_json,
        render=lambda v: (
            "\n".join(
                f"{r['path']}  (~{r['tokens']} tok)  {truncate(r['description'], 80)}"
                for r in v["results"]
            )
            or f"no files match {query!r}"
        ),
    )


@click.command(name="map")
@click.option(
    "--budget",
    "budget",
    type=click.IntRange(50, 100_000),
    default=1000,
    show_default=True,
    help="Token budget for the map.",
)
@click.option("--session", "session_id", default=None, help="Seed with this session's files.")
@store_option
@json_option
def map_(budget: int, session_id: str | None, store: Path | None, as_json: bool) -> None:
    """Print the most central files (PageRank over imports) fitted to a token budget.

    Seeded by the files the latest (or given) session read and wrote.

    \b
    Example:
        memdir map --budget 500
    """
    rows = project.central_map(resolve(store), budget_tokens=budget, session_id=session_id)
    emit(
        {"results": rows},
        as_json=as_json,
        render=lambda v: "\n".join(r["line"] for r in v["results"]) or "no files",
    )


@click.command()
@click.option("--session", "session_id", default=None, help="Only this session.")
@click.option("--waste", is_flag=True, help="Where tokens went without need, and the fixes.")
@click.option(
    "--days",
    type=click.IntRange(1),
    default=30,
    show_default=True,
    help="With --waste: how many days of the action log to read.",
)
@store_option
@json_option
def stats(
    session_id: str | None, waste: bool, days: int, store: Path | None, as_json: bool
) -> None:
    """Show the token ledger: tokens and cost injected against saved, per session and model.

    Saved is what the duplicate-read gate refused, less the reads of those files that
    followed; costs use the manifest's [prices] over memdir's dated list prices.

    With --waste: repeated reads, large reads of files never edited, refused
    re-reads retried, noisy commands, injected beliefs never used and a store no
    one updates, each with its evidence and the setting or habit that fixes it.

    \b
    Example:
        memdir stats
        memdir stats --waste --days 7
    """
    if waste:
        from memdir.cli.commands.agent import render_waste
        from memdir.service import memory

        emit(memory.waste(resolve(store), days), as_json=as_json, render=render_waste)
        return
    found = project.stats(resolve(store), session_id)

    def usd(value: float | None) -> str:
        return "" if value is None else f" (${value:.4f})"  # no price: tokens only

    def balance(b: dict[str, Any]) -> str:
        return (
            f"injected {b['injected_tokens']} tokens{usd(b['injected_usd'])}, saved "
            f"{b['saved_tokens']}{usd(b['saved_usd'])}, net {b['net_tokens']:+d}"
            f"{usd(b['net_usd'])}; not repeated: {b['withheld_tokens']}"
        )

    def render(v: dict[str, Any]) -> str:
        t = v["totals"]
        lines = [
            "records: "
            + (", ".join(f"{n} {s}" for s, n in sorted(v["records"].items())) or "none yet"),
            "active by kind: "
            + (", ".join(f"{n} {k}" for k, n in sorted(v["kinds"].items())) or "none"),
            "active by tag: "
            + (", ".join(f"{n} {t}" for t, n in list(v["tags"].items())[:15]) or "none"),
            f"balance: {balance(v['balance'])}",
            "  (not repeated: preambles and records a session already held, left out of its "
            "later prompts; never counted as saved)",
            f"reads: {t['reads']} (~{t['read_tokens']} tokens); full re-reads refused: "
            f"{t['denied']} (~{t['denied_tokens']} tokens, {t['reread_tokens']} read anyway)",
        ]
        for model, b in v["models"].items():
            lines.append(f"  {'model unknown' if model == 'unknown' else model}: {balance(b)}")
        unpriced = [
            "sessions whose model is unknown" if m == "unknown" else m
            for m, b in v["models"].items()
            if b["injected_usd"] is None
        ]
        lines.append(
            f"prices: USD per million input tokens as of {v['prices']['as_of']} "
            "(override in memdir.toml [prices])"
            + (
                f"; no price for {', '.join(unpriced)} (the host did not say which model, or "
                "it is not in the table): tokens only"
                if unpriced
                else ""
            )
        )
        lines.append(f"sessions: {len(v['sessions'])}")
        for s in v["sessions"][:10]:
            lines.append(
                f"  {s['session']} ({s['model'] or 'model unknown'}): {s['prompts']} prompts, "
                f"{s['tool_calls']} tool calls, {s['files_written']} files written, "
                f"{s['beliefs']} beliefs saved; {balance(s['balance'])}"
            )
        return "\n".join(lines)

    emit(found, as_json=as_json, render=render)


@click.command()
@click.option("--logs", "logs_only", is_flag=True, help="Only commit the logs and anatomy (local).")
@click.option("--pull", "pull_only", is_flag=True, help="Only fetch and merge from the remote.")
@click.option("--push", "push_only", is_flag=True, help="Only push to the remote.")
@click.option("--local", "local", is_flag=True, help="Only commit here; reach no remote.")
@store_option
@json_option
def sync(
    logs_only: bool,
    pull_only: bool,
    push_only: bool,
    local: bool,
    store: Path | None,
    as_json: bool,
) -> None:
    """Commit the store, then share it: fetch, merge and push (see `memdir remote`).

    By default the store goes to the project's own remote `origin`, on the
    branch `memdir` (orphan: no project files in it), with your own git
    credentials. Two edits of one record on two machines resolve by
    supersession (`memdir review` lists them); a file edited by hand on both
    sides stops the sync with nothing changed (exit 1; `memdir health` names
    it). A push that could not happen (`--push` while the remote has
    changes this machine lacks, or a remote that kept moving) exits 1, after
    saying what was done here. Without a remote, only commits.

    \b
    Example:
        memdir sync
        memdir sync --pull
    """
    if pull_only and push_only:
        raise click.UsageError("--pull and --push together are what `memdir sync` does")
    done = project.sync(
        resolve(store),
        logs_only=logs_only,
        share=not local,
        pull=not push_only,
        push=not pull_only,
    )
    emit(done.to_json(), as_json=as_json, render=_synced)
    if done.note and done.remote and not pull_only and not logs_only and not done.pushed:
        raise SystemExit(1)  # asked to push and could not (what was done here is kept)


def _synced(v: dict[str, Any]) -> str:
    lines = [f"committed {len(v['committed'])} file(s)" if v["committed"] else "nothing to commit"]
    if v["remote"]:
        where = f"{v['remote']['remote']} ({v['remote']['url']}), branch {v['remote']['branch']}"
        fetched = {
            "none": "",
            "up-to-date": "nothing new to fetch",
            "fast-forward": f"fetched {v['fetched_commits']} commit(s)",
            "merged": f"fetched {v['fetched_commits']} commit(s) and merged them",
        }[v["pulled"]]
        if v["pulled"] in ("fast-forward", "merged"):
            fetched += f" ({v['received']} file(s) changed here)"
        pushed = f"pushed {v['pushed_commits']} commit(s)" if v["pushed"] else ""
        if v["pulled"] == "up-to-date" and not v["pushed"] and not v.get("note"):
            done = "nothing to do: nothing new to fetch, nothing pushed"
        else:
            done = "; ".join(part for part in (fetched, pushed) if part) or "nothing pushed"
        lines.append(f"{where}: {done}")
        for r in v["resolved"]:
            kept = f"; the other version kept as {r['kept_as']}" if r["kept_as"] else ""
            lines.append(f"  {r['record']} changed on two machines: {r['current']}{kept}")
        if v["resolved"]:
            lines.append("  (`memdir review` lists automatic resolutions)")
    if v.get("note"):
        lines.append(v["note"])
    return "\n".join(lines)


@click.command()
@click.argument("name", required=False)
@click.option("--branch", default=None, help="The branch on the remote (default memdir).")
@store_option
@json_option
def remote(name: str | None, branch: str | None, store: Path | None, as_json: bool) -> None:
    """Show or set where `memdir sync` shares this store (this machine only).

    NAME is one of the project's git remotes (default origin) or any git URL
    or path. The transport and credentials are your git's own.

    \b
    Example:
        memdir remote
        memdir remote upstream --branch team-memory
        memdir remote git@github.com:team/project.git
    """
    found = project.remote(resolve(store), name, branch)
    emit(
        found.to_json(),
        as_json=as_json,
        render=lambda v: (
            f"remote: {v['remote']} ({v['url'] or 'no such remote in the project'})\n"
            f"branch: {v['branch']}" + ("" if v["configured"] else "  (defaults)")
        ),
    )


COMMANDS = [install, uninstall, hosts, doctor, scan, find, map_, stats, sync, remote]
