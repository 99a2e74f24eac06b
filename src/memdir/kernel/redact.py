"""Secrets and private spans: found before anything is persisted, refused or masked.

One implementation for every writer (DESIGN §4, §10.5): ``remember`` refuses text holding a
secret (:func:`check_text`), and every capture path (journal, action log, observer output,
anatomy descriptions, exports, error logs) masks it (:func:`redact`) before the bytes reach a
file. A mask keeps the kind and a short non-secret prefix (``sk-proj-…``) so a reader can tell
what was there: ``[REDACTED:openai-key]``. ``<private>…</private>`` spans are dropped whole.

The patterns aim at value-shaped secrets, so that prose about secrets ("No API key is present
in the build"), references to them (``apiKey: import.meta.env.VITE_MAP_KEY``) and AWS's
documented example key survive (case B31). Sources: the token formats published by AWS
(``AKIA``/``ASIA`` + 16), GitHub (``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_``,
``github_pat_``), OpenAI/Anthropic (``sk-``, ``sk-ant-``), Slack (``xox?-``), Google (``AIza``),
Stripe (``sk_live_``/``rk_live_``), GitLab (``glpat-``), npm (``npm_``), PyPI (``pypi-``),
JWTs, PEM private key blocks, passwords in URLs and ``.env``-style assignments.

Imports: standard library only.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import PurePath

from memdir.kernel.errors import SecretError


class Finding:
    """One secret found in a text: its kind and span ``text[start:end]`` (a plain class: light)."""

    __slots__ = ("end", "kind", "start")

    def __init__(self, kind: str, start: int, end: int) -> None:
        self.kind = kind
        self.start = start
        self.end = end

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Finding) and (self.kind, self.start, self.end) == (
            other.kind,
            other.start,
            other.end,
        )

    def __hash__(self) -> int:
        return hash((self.kind, self.start, self.end))

    def __repr__(self) -> str:
        return f"Finding({self.kind!r}, {self.start}, {self.end})"


@cache
def _patterns() -> list[tuple[str, re.Pattern[str], int]]:
    """Return (kind, pattern, group holding the secret value: 0 for the whole match).

    Compiled on first use, so the hook path pays for them only when it redacts.
    """
    return [
        (
            "private-key",
            re.compile(
                r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
                r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|.*\Z)",
                re.DOTALL,
            ),
            0,
        ),
        ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b"), 0),
        (
            "aws-secret-key",
            re.compile(
                r"(?i)aws_?secret_?(?:access_?)?key[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
            ),
            1,
        ),
        (
            "github-token",
            re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
            0,
        ),
        ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}"), 0),
        ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"), 0),
        ("stripe-key", re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"), 0),
        ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), 0),
        ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}"), 0),
        ("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"), 0),
        ("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"), 0),
        ("pypi-token", re.compile(r"\bpypi-[A-Za-z0-9_-]{50,}"), 0),
        (
            "jwt",
            re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
            0,
        ),
        (
            "url-password",
            re.compile(r"\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@]{1,128}:([^\s@/]{1,256})@[^\s]"),
            1,
        ),
        (
            "env-secret",
            re.compile(
                # After a line start, a space, or an opening quote or bracket: a repr, a JSON
                # list, or docker-compose's - "DB_PASSWORD=…". The closing quote may be missing
                # (text cut short after the value).
                r"(?m)(?:^|(?<=[\s;'\"`(\[{,]))(?:export\s+)?"
                r"[A-Z0-9_]*(?:SECRET|TOKEN|PASSW(?:OR)?D|PWD|PASSPHRASE|API_?KEY|ACCESS_?KEY|"
                r"PRIVATE_?KEY|CREDENTIALS?|AUTH|DSN|CONN(?:ECTION)?_?STR(?:ING)?)[A-Z0-9_]*"
                r"[ \t]*=[ \t]*(['\"]?)([^\s'\"#]{6,})"
            ),
            2,
        ),
        (
            "config-secret",
            re.compile(
                r"(?i)[\"']?\b(?:password|passwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|"
                r"client[_-]?secret|private[_-]?key)[\"']?[ \t]*[:=][ \t]*([\"'])([^\"'\s]{8,})"
            ),
            2,
        ),
    ]


ALLOWED_VALUES = frozenset(
    {
        "AKIAIOSFODNN7EXAMPLE",  # AWS's documented example access key id
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",  # AWS's documented example secret key
    }
)
"""Published documentation examples, which are safe to keep in prose."""

_REFERENCE = re.compile(
    r"^(?:\$\{?|%|<|\{\{)|(?:process\.env|import\.meta\.env|os\.environ|getenv|ENV\[)"
    r"|^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$"
    r"|^(?:x{4,}|\*{4,}|changeme|example|placeholder|redacted|null|none|true|false|\d{1,9})$",
    re.IGNORECASE,
)
"""A value that names where a secret comes from instead of being one."""

_PRIVATE_SPAN = re.compile(r"<private>.*?(?:</private>|\Z)", re.DOTALL | re.IGNORECASE)
_REDACTED = re.compile(r"\[REDACTED:[a-z-]+\]")


def _is_reference(value: str) -> bool:
    return bool(_REFERENCE.search(value)) or bool(_REDACTED.search(value))


_MAYBE = re.compile(
    r"(?i)sk[-_]|rk_|akia|asia|agpa|aida|aroa|anpa|gh[pousr]_|github_pat_|xox|aiza|glpat-|npm_|"
    r"pypi-|eyj|private[-_ ]?key|://|secret|token|passw|pwd|passphrase|api[-_]?key|"
    r"access[-_]?key|credential|auth|dsn|conn"
)
"""Cheap screen: text without any of these cannot hold a secret the patterns find."""


def find_secrets(text: str) -> list[Finding]:
    """Return the secrets in ``text``, sorted by position, overlapping findings merged.

    Returns:
        Findings whose span covers the secret value only (an assignment's key name stays).
    """
    if not _MAYBE.search(text):
        return []  # the common case never compiles the full pattern set
    found: list[Finding] = []
    for kind, pattern, group in _patterns():
        for match in pattern.finditer(text):
            value = match.group(group)
            if not value or value in ALLOWED_VALUES or _REDACTED.search(value):
                continue
            if kind in {"env-secret", "config-secret"} and _is_reference(value):
                continue
            found.append(Finding(kind, match.start(group), match.end(group)))
    found.sort(key=lambda f: (f.start, -f.end))
    merged: list[Finding] = []
    for finding in found:
        if merged and finding.start < merged[-1].end:
            last = merged[-1]
            merged[-1] = Finding(last.kind, last.start, max(last.end, finding.end))
        else:
            merged.append(finding)
    return merged


def strip_private(text: str) -> str:
    """Drop every ``<private>…</private>`` span (an unclosed one runs to the end of the text)."""
    return _PRIVATE_SPAN.sub("", text)


_KEEP_PREFIX = re.compile(
    r"^(sk-ant-|sk-proj-|sk-svcacct-|sk-admin-|sk-|gh[pousr]_|github_pat_|xox[abposr]-|AKIA|ASIA|"
    r"AIza|glpat-|npm_|pypi-|sk_live_|sk_test_|rk_live_|rk_test_|eyJ)"
)


def redact(text: str) -> str:
    """Return ``text`` with private spans dropped and every secret value masked.

    The mask is ``<prefix>[REDACTED:<kind>]``, where the prefix is the token's published,
    non-secret prefix when it has one (``sk-proj-[REDACTED:openai-key]``). Idempotent.
    """
    text = strip_private(text)
    findings = find_secrets(text)
    if not findings:
        return text
    parts: list[str] = []
    position = 0
    for finding in findings:
        value = text[finding.start : finding.end]
        prefix_match = _KEEP_PREFIX.match(value)
        prefix = prefix_match.group(1) if prefix_match else ""
        parts.append(text[position : finding.start])
        parts.append(f"{prefix}[REDACTED:{finding.kind}]")
        position = finding.end
    parts.append(text[position:])
    return "".join(parts)


def check_text(text: str) -> None:
    """Refuse ``text`` if it holds a secret, naming the kind and never echoing the value.

    Raises:
        SecretError: one or more secrets were found; the message lists their kinds.
    """
    findings = find_secrets(text)
    if findings:
        kinds = sorted({finding.kind for finding in findings})
        raise SecretError(
            f"refused: the text contains what looks like a secret ({', '.join(kinds)}); "
            "secrets never enter memory. Remove it, or keep it in a secret manager and "
            "remember where it lives instead"
        )


_SECRET_NAMES = re.compile(
    r"^(?:\.env(?:\..*)?|.*\.env|\.envrc|\.netrc|\.npmrc|\.pypirc|\.pgpass|\.git-credentials|"
    r"id_(?:rsa|dsa|ecdsa|ed25519)(?:\.pub)?|.*\.(?:pem|key|p12|pfx|jks|keystore|kdbx|asc|gpg|ppk)|"
    r"credentials(?:\..*)?|.*credential.*|secrets?(?:\..*)?|.*\.secrets?(?:\..*)?|"
    r"service[-_]account.*\.json|htpasswd|\.htpasswd|known_hosts|authorized_keys)$",
    re.IGNORECASE,
)
_SAFE_NAMES = re.compile(r"^\.env\.(?:example|sample|template|dist)$", re.IGNORECASE)


def is_secret_path(path: str | PurePath) -> bool:
    """Return whether a path marks secret material: ``.env*``, keys, keystores, credentials.

    These files are never read into, described in or recorded by any memdir file
    (DESIGN §10.5). ``.env.example`` and its kin are ordinary files. A path whose own text
    holds a secret (``notes-AKIA….txt``) is one too: recording its name would record the secret.
    """
    parts = PurePath(str(path).replace("\\", "/")).parts
    if not parts:
        return False
    if find_secrets(str(path)):
        return True
    if any(part in {".ssh", ".gnupg", ".aws"} for part in parts[:-1]):
        return True
    name = parts[-1]
    return bool(_SECRET_NAMES.match(name)) and not _SAFE_NAMES.match(name)
