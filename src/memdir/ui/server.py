"""Serve the review page on 127.0.0.1 with uvicorn until Ctrl-C."""

from __future__ import annotations

import secrets
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import uvicorn

from memdir.kernel.base.errors import UsageError
from memdir.ui.app import create_app

HOST = "127.0.0.1"


@dataclass
class Served:
    """A page being served: its URL (with the token), and the uvicorn server to stop."""

    url: str
    port: int
    token: str
    server: uvicorn.Server
    sock: socket.socket

    def run(self) -> None:
        """Serve until the server is told to exit (Ctrl-C in the main thread)."""
        self.server.run(sockets=[self.sock])

    def start_thread(self) -> threading.Thread:
        """Serve from a daemon thread; return once it accepts connections (tests)."""
        thread = threading.Thread(target=self.run, daemon=True)
        thread.start()
        while not self.server.started:
            if not thread.is_alive():
                raise RuntimeError("the page's server stopped before it started")
            threading.Event().wait(0.02)
        return thread

    def stop(self, thread: threading.Thread | None = None) -> None:
        """Ask the server to exit and wait for ``thread``."""
        self.server.should_exit = True
        if thread is not None:
            thread.join(10)


def prepare(store: Path, port: int = 0) -> Served:
    """Bind 127.0.0.1:``port`` (0: a free port) and build the server for ``store``.

    Raises:
        UsageError: the port is taken or cannot be bound.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind((HOST, port))
        sock.listen(128)  # connections wait from now on, so the printed address works at once
    except OSError as err:
        sock.close()
        raise UsageError(f"cannot listen on {HOST}:{port}: {err.strerror or err}") from None
    bound = int(sock.getsockname()[1])
    token = secrets.token_urlsafe(32)
    app = create_app(store, token=token, port=bound)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    return Served(f"http://{HOST}:{bound}/?token={token}", bound, token, server, sock)


def serve(
    store: Path, *, port: int = 0, open_browser: bool = True, announce: Callable[[str, int], None]
) -> None:
    """Serve ``store``'s page until Ctrl-C; tell ``announce(url, port)`` and open a browser.

    Raises:
        UsageError: the port cannot be bound.
    """
    served = prepare(store, port)
    announce(served.url, served.port)
    if open_browser:
        import webbrowser

        webbrowser.open(served.url)
    served.run()
