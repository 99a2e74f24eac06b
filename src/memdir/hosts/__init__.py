"""Host installers (L2): hooks, MCP entry and instruction block for each coding agent.

``HOSTS`` is the explicit registry; ``memdir hosts`` prints it and ``memdir install --host H``
looks hosts up here, failing fast on an unknown name.
"""

from __future__ import annotations

from memdir.hosts.base import HostSpec
from memdir.hosts.registry import HOSTS, get_host

__all__ = ["HOSTS", "HostSpec", "get_host"]
