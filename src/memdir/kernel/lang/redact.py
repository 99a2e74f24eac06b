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
JWTs, PEM private key blocks, passwords in URLs and ``.env``-style assignments, and secrets
in prose: a secret word, an optional connector ("is", "of", "with"…) and a credential-shaped
value (``login with password Tr0ub…``), while "the password reset flow" stays.

Imports: standard library only.
"""

from __future__ import annotations

import re
from functools import cache
from itertools import pairwise
from pathlib import PurePath

from memdir.kernel.base.errors import SecretError


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


_START = r"(?<![A-Za-z0-9])"
_END = r"(?![A-Za-z0-9])"
_VALUE = r"""(?:(?P<q>["'])(?P<qv>[^"'\n]{1,256})(?P=q)|["']?(?P<v>[^\s"'#,;)}\]]{1,256}))"""
"""A value: quoted (may hold spaces), or a bare run, perhaps after a quote that never closes
(text cut short after the value); at most 256 characters."""


@cache
def _patterns() -> list[tuple[str, re.Pattern[str], int | str]]:
    """Return (kind, pattern, group holding the secret value: 0 for the whole match).

    Assignments and flags are matched inside a lookahead, so ``note: KEY=value`` is tried
    at ``note`` and again at ``KEY`` (a match never hides the one inside it).
    Compiled on first use, so the hook path pays for them only when it redacts. Every
    quantifier is bounded or anchored to a literal, so a scan is linear in the text's length:
    a hostile 100 KB run of ``TOKENTOKEN…`` costs milliseconds, not seconds.
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
        ("age-secret-key", re.compile(r"AGE-SECRET-KEY-1[0-9A-Z]{58}"), 0),
        (
            "aws-access-key",
            re.compile(_START + r"(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}" + _END),
            0,
        ),
        (
            "aws-secret-key",
            re.compile(
                r"(?i)aws[ _-]?secret[ _-]?(?:access[ _-]?)?key[\"']?[ \t]{0,8}"
                r"(?:[:=]|(?:is|was|of|=)(?![A-Za-z0-9]))?[ \t]{0,8}[\"']?"
                r"([A-Za-z0-9/+=]{30,100})(?![A-Za-z0-9/+=])"
            ),
            1,
        ),
        (
            "github-token",
            re.compile(
                _START + r"(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{22,255})"
            ),
            0,
        ),
        ("anthropic-key", re.compile(_START + r"sk-ant-[A-Za-z0-9_-]{20,255}"), 0),
        (
            "openai-key",
            re.compile(_START + r"sk-(?:proj-|svcacct-|admin-|or-v1-)?[A-Za-z0-9_-]{20,255}"),
            0,
        ),
        ("stripe-key", re.compile(_START + r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,255}"), 0),
        ("slack-token", re.compile(_START + r"xox[abposr]-[A-Za-z0-9-]{10,255}"), 0),
        ("google-api-key", re.compile(_START + r"AIza[0-9A-Za-z_-]{35}"), 0),
        ("gitlab-token", re.compile(_START + r"glpat-[A-Za-z0-9_-]{20,255}"), 0),
        ("npm-token", re.compile(_START + r"npm_[A-Za-z0-9]{36}" + _END), 0),
        ("pypi-token", re.compile(_START + r"pypi-[A-Za-z0-9_-]{50,255}"), 0),
        ("huggingface-token", re.compile(_START + r"hf_[A-Za-z0-9]{30,255}"), 0),
        ("digitalocean-token", re.compile(_START + r"do[opr]_v1_[a-f0-9]{64}" + _END), 0),
        ("sendgrid-key", re.compile(_START + r"SG\.[A-Za-z0-9_-]{16,64}\.[A-Za-z0-9_-]{16,64}"), 0),
        ("twilio-key", re.compile(_START + r"SK[0-9a-f]{32}" + _END), 0),
        ("mailgun-key", re.compile(_START + r"key-[0-9a-f]{32}" + _END), 0),
        ("shopify-token", re.compile(_START + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _END), 0),
        ("databricks-token", re.compile(_START + r"dapi[a-f0-9]{32}(?:-\d)?" + _END), 0),
        ("groq-key", re.compile(_START + r"gsk_[A-Za-z0-9]{48,64}" + _END), 0),
        ("replicate-token", re.compile(_START + r"r8_[A-Za-z0-9]{37}" + _END), 0),
        ("linear-key", re.compile(_START + r"lin_api_[A-Za-z0-9]{40}" + _END), 0),
        ("postman-key", re.compile(_START + r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}" + _END), 0),
        ("square-token", re.compile(_START + r"sq0(?:atp|csp)-[0-9A-Za-z_-]{22,60}"), 0),
        ("telegram-bot-token", re.compile(_START + r"\d{8,10}:AA[A-Za-z0-9_-]{33}" + _END), 0),
        (
            "webhook-url",
            re.compile(
                r"https://(?:hooks\.slack\.com/services/[A-Za-z0-9_/]{20,120}"
                r"|(?:discord(?:app)?\.com)/api/webhooks/\d{5,30}/[A-Za-z0-9_-]{30,120})"
            ),
            0,
        ),
        (
            "jwt",
            re.compile(
                _START
                + r"eyJ[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,8192}\.[A-Za-z0-9_-]{8,4096}"
            ),
            0,
        ),
        (
            "url-password",
            re.compile(r"\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@]{0,128}:([^\s@/]{1,256})@[^\s]"),
            1,
        ),
        (
            "auth-header",
            re.compile(
                r"(?i)\b(?:proxy-)?authorization[\"']?\s{0,8}[:=]\s{0,8}[\"']?"
                r"(?:bearer|basic|token|bot|digest|apikey|sso-key)\s{1,8}([A-Za-z0-9._~+/=:-]{8,512})"
                r"|\bbearer\s{1,8}([A-Za-z0-9._~+/-]{16,512}=*)"
            ),
            "any",
        ),
        (
            "cli-password",
            re.compile(
                r"(?<![\w-])(?:"
                # curl/wget style: -u user:password, --user=user:password
                r"(?:-u|--user|--proxy-user)(?:[ \t]{1,8}|=)[\"']?"
                r"[^\s:\"']{1,128}:([^\s\"']{3,256})"
                # mysql -pPASSWORD (attached, as the mysql clients take it)
                r"|(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b"
                r"[^\n|;&]{0,200}?[ \t]-p[\"']?([^\s\"'-][^\s\"']{2,255})"
                # sshpass -p X, docker/podman/helm … login -p X
                r"|(?:sshpass|(?:docker|podman|nerdctl|buildah|helm|oras|skopeo)"
                r"[ \t]+(?:registry[ \t]+)?login)"
                r"\b[^\n|;&]{0,200}?[ \t]-p[ \t]{1,8}[\"']?([^\s\"']{3,256})"
                r")"
            ),
            "any",
        ),
        (
            "flag-secret",
            re.compile(
                r"(?=(?<![\w-])--?(?P<key>[A-Za-z][A-Za-z0-9-]{1,40})(?:=|[ \t]{1,8})"
                + _VALUE
                + ")"
            ),
            "value",
        ),
        (
            "assigned-secret",
            re.compile(
                r"(?=(?<![A-Za-z0-9_.$-])(?P<key>[A-Za-z_][A-Za-z0-9_.-]{0,63})[\"']?"
                r"[ \t]{0,8}(?P<op>:=|=>|=|:)[ \t]{0,8}" + _VALUE + ")"
            ),
            "value",
        ),
        (
            "prose-secret",
            re.compile(
                r"(?i)(?<![\w.$-])(?:pass(?:word|wd|phrase|code)s?|pwd|pw|pin|secrets?|"
                r"tokens?|(?:api|access|secret|private)[ _-]?key|credentials?)(?![\w-])"
                r"(?:[ \t]{0,4}(?P<op>[:=])[ \t]{0,4}"
                # "the password for the staging box is X": for/on/to/at/in, up to four
                # words, then a stating verb (a fresh user's trial stored this one)
                r"|[ \t]{1,4}(?:for|on|to|at|in)(?:[ \t]{1,4}[^\s:=\"'`]{1,40}){1,4}?"
                r"[ \t]{1,4}(?P<said>is|was|are|reads)[ \t]{1,4}"
                r"|[ \t]{1,4}(?:(?P<word>is|was|are|reads|of|with)[ \t]{1,4})?)"
                r"[\"'`]?(?P<v>[^\s\"'`]{6,256})"
            ),
            "prose",
        ),
    ]


_SPLIT_KEY = re.compile(r"[_.\-]+|(?<=[a-z0-9])(?=[A-Z])")
_SECRET_WORDS = frozenset(
    {
        "secret", "secrets", "token", "tokens", "password", "passwd", "passphrase", "pwd",
        "pass", "pw", "credential", "credentials", "creds", "dsn", "apikey", "auth", "sas",
        "passcode", "pin",
    }
)  # fmt: skip
_SECRET_PAIRS = frozenset(
    {
        ("api", "key"), ("access", "key"), ("private", "key"), ("secret", "key"),
        ("auth", "key"), ("client", "secret"), ("conn", "str"), ("connection", "string"),
        ("account", "key"), ("master", "key"), ("encryption", "key"), ("signing", "key"),
        ("app", "key"), ("license", "key"), ("session", "key"), ("shared", "key"),
    }
)  # fmt: skip
_NOT_THE_SECRET = frozenset(
    {
        "file", "path", "dir", "env", "var", "name", "id", "url", "uri", "endpoint", "type",
        "length", "len", "ttl", "count", "limit", "expiry", "expires", "expiration", "header",
        "prefix", "hint", "policy", "size", "max", "min", "timeout", "format", "field",
        "required", "enabled", "mode", "method", "label", "lifetime", "version",
    }
)  # fmt: skip
"""A key ending in one of these names something about the secret, not the secret."""


def _secret_key(key: str) -> str:
    """Return how an assignment's key names a secret: ``"yes"``, ``"key"`` or ``""``.

    ``"yes"``: ``DB_PASS``, ``apiKey``, ``x-api-key``; ``"key"``: ``FOO_KEY``, a secret only
    with a key-shaped value; ``""``: not a secret's name.
    """
    parts = [p.lower() for p in _SPLIT_KEY.split(key) if p]
    if not parts or parts[-1] in _NOT_THE_SECRET or key in {"PWD", "OLDPWD"}:
        return ""
    if any(p in _SECRET_WORDS for p in parts):
        return "yes"
    if any(pair in _SECRET_PAIRS for pair in pairwise(parts)):
        return "yes"
    return "key" if parts[-1] == "key" else ""


_KEYISH = re.compile(r"^(?:base64:)?[A-Za-z0-9+/_=-]{16,}$")


def _secret_value(value: str, *, loose: bool) -> bool:
    """Whether an assigned value can be a secret (not a reference, placeholder or path).

    ``loose`` assignments (``key: value`` in prose or YAML, a ``--flag value``) need a value
    that looks like a credential: eight characters with a digit or symbol, or sixteen.
    """
    if len(value) < 6 or _is_reference(value) or "://" in value:
        return False
    if value[0] in "/~." or "[redacted:" in value.lower() or value.startswith("file:"):
        return False
    if loose:
        shaped = any(c.isdigit() for c in value) or any(not c.isalnum() for c in value)
        return (len(value) >= 8 and shaped) or len(value) >= 16
    return True


_STATING = frozenset({"is", "was", "are", "reads"})
"""Connectors that state a secret's value ("the password is …"): such a value needs only the
``loose`` shape. After a bare keyword, "of" or "with" the value must look like a credential."""
_STRONG = re.compile(r"[!@#$%^&*+=?~|\\]")
"""Symbols that rarely join ordinary words (``-``, ``_``, ``.``, ``/`` do: ``key-value``;
brackets do in code and prose: ``getToken()``, ``(ceil(bytes/4))``)."""
_EMAIL = re.compile(r"^[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}$")
_DIGIT = re.compile(r"\d")


def _credential_shaped(value: str) -> bool:
    """Whether a word in prose looks like a credential rather than an ordinary word.

    Args:
        value: one whitespace-free word, trailing sentence punctuation already cut.

    Returns:
        True for at least eight characters mixing letters with digits or uncommon symbols
        (``Tr0ub4dor&3``, ``hunter2hunter2``), or six that mix all three (``Pa$$w0``); False
        for words (``reset``, ``key-value``), numbers, references, paths and URLs.
    """
    digits = _DIGIT.search(value) is not None
    symbols = _STRONG.search(value) is not None
    if not ((len(value) >= 8 and (digits or symbols)) or (digits and symbols)):
        return False  # the cheap test first: a scan of long prose meets many plain words
    if value[0] in "([{<" or _EMAIL.match(value):
        return False
    return any(c.isalpha() for c in value) and _secret_value(value, loose=False)


ALLOWED_VALUES = frozenset(
    {
        "AKIAIOSFODNN7EXAMPLE",  # AWS's documented example access key id
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",  # AWS's documented example secret key
    }
)
"""Published documentation examples, which are safe to keep in prose."""

_REFERENCE = (
    r"(?i)^(?:\$\{?|%|<|\{\{)|(?:process\.env|import\.meta\.env|os\.environ|getenv|ENV\[)"
    r"|^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$"
    r"|^(?:x{4,}|\*{4,}|changeme|example|placeholder|redacted|null|none|true|false|\d{1,9})$"
)
"""A value that names where a secret comes from instead of being one (compiled on first use:
``re`` caches it)."""

_PRIVATE_SPAN = re.compile(r"<private>.*?(?:</private>|\Z)", re.DOTALL | re.IGNORECASE)
_REDACTED = re.compile(r"(?i)\[REDACTED:[a-z-]+\]")


def _is_reference(value: str) -> bool:
    return bool(re.search(_REFERENCE, value)) or bool(_REDACTED.search(value))


_MAYBE = re.compile(
    r"(?i)sk[-_0-9a-f]|rk_|akia|asia|agpa|aida|aroa|anpa|gh[pousr]_|github_pat_|xox|aiza|glpat-|npm_|"
    r"pypi-|eyj|key|://|secret|token|pass|pwd|pw\b|pin\b|credential|cred|auth|dsn|conn|sas|"
    r"hf_|do[opr]_v1|sg\.|shp|dapi|gsk_|r8_|lin_api|pmak-|sq0|:aa|bearer|mysql|mariadb|"
    r"login|-u\b|--user"
)
"""Cheap screen: text without any of these cannot hold a secret the patterns find (each
pattern needs one of them: a token prefix, a secret word in a key, or a command name)."""


def _value_span(kind: str, match: re.Match[str], group: int | str) -> tuple[int, int] | None:
    """Return the span of the secret value in ``match``, or ``None`` when it is not one."""
    if isinstance(group, int):
        value = match.group(group)
        if not value:
            return None
        return match.span(group)
    if group == "any":
        for number in range(1, (match.re.groups or 0) + 1):
            if match.group(number):
                return match.span(number)
        return None
    if group == "prose":
        value = match.group("v").rstrip(".,;:!?)")
        stated = (
            match.group("op")
            or match.group("said")
            or (match.group("word") or "").lower() in _STATING
        )
        if not _credential_shaped(value) and not (stated and _secret_value(value, loose=True)):
            return None
        return match.start("v"), match.start("v") + len(value)
    name = "qv" if match.group("qv") is not None else "v"
    value = match.group(name)
    how = _secret_key(match.group("key"))
    if not value or not how:
        return None
    loose = kind == "flag-secret" or (match.group("op") == ":" and match.group("q") is None)
    if not _secret_value(value, loose=loose):
        return None
    if how == "key" and not _KEYISH.match(value):
        return None
    return match.span(name)


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
            span = _value_span(kind, match, group)
            if span is None:
                continue
            value = text[span[0] : span[1]]
            if value in ALLOWED_VALUES or _REDACTED.search(value):
                continue
            found.append(Finding(kind, span[0], span[1]))
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


_KEEP_PREFIX = (
    r"^(sk-ant-|sk-proj-|sk-svcacct-|sk-admin-|sk-|gh[pousr]_|github_pat_|xox[abposr]-|AKIA|ASIA|"
    r"AIza|glpat-|npm_|pypi-|sk_live_|sk_test_|rk_live_|rk_test_|eyJ)"
)  # compiled on first use (``re`` caches it): only a mask needs it


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
        prefix_match = re.match(_KEEP_PREFIX, value)
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
