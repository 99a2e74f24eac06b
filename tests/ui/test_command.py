"""``memdir ui`` as a person runs it: a real server on 127.0.0.1, the token, Ctrl-C."""

from __future__ import annotations

import http.cookiejar
import json
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest


def _get(url: str) -> int:
    opener = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
    )
    try:
        with opener.open(url, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as err:
        return err.code


@pytest.mark.slow
@pytest.mark.enable_socket
def test_memdir_ui_serves_on_loopback_with_a_token_and_stops_on_ctrl_c(
    store: Path, memdir_exe: list[str]
) -> None:
    proc = subprocess.Popen(
        [*memdir_exe, "ui", "--no-open", "--json", "--store", str(store)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        lines: list[str] = []
        while not "".join(lines).rstrip().endswith("}"):
            line = proc.stdout.readline()
            assert line, proc.stderr.read() if proc.stderr else "no output"
            lines.append(line)
        served = json.loads("".join(lines))
        assert served["url"].startswith(f"http://127.0.0.1:{served['port']}/?token=")
        assert served["port"] > 0
        base = f"http://127.0.0.1:{served['port']}/"
        assert _get(base) == 403  # no token
        assert _get(base + "?token=wrong") == 403
        assert _get(served["url"]) == 200  # the redirect sets the cookie urllib follows
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert "memdir ui: stopped" in err
    assert "Traceback" not in err


@pytest.mark.slow
@pytest.mark.enable_socket
def test_a_taken_port_is_a_clear_usage_error(store: Path, memdir_exe: list[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [*memdir_exe, "ui", "--no-open", "--port", str(port), "--store", str(store)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_cli_loads_no_web_stack_until_ui_runs() -> None:
    code = (
        "import sys, memdir.cli.app; "
        "print(sorted(m for m in ('starlette', 'uvicorn', 'jinja2') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    code = "import sys, memdir.ui.app; print('starlette' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"  # the same probe sees it when the page is built
