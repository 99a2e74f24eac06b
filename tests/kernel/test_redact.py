import time

import pytest

from memdir.kernel.base.errors import SecretError
from memdir.kernel.lang.redact import (
    check_text,
    find_secrets,
    is_secret_path,
    redact,
    strip_private,
)

# B31: value-shaped secrets from a real .env, a key block and a URL.
SECRETS = {
    "OPENAI_API_KEY=sk-proj-EXAMPLE000000000000000000000000": "openai-key",
    "export GITHUB_TOKEN=ghp_EXAMPLEEXAMPLEEXAMPLEEXAMPLE0000": "github-token",
    "AWS_ACCESS_KEY_ID=AKIAEXAMPLE000000000": "aws-access-key",
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----": "private-key",
    "postgres://app:s3cretEXAMPLE@db:5432/x": "url-password",
    "DB_PASSWORD=hunter2hunter2": "assigned-secret",
    'password: "correct-horse-battery"': "assigned-secret",
    "xoxb-123456789012-abcdefghijkl": "slack-token",
    "sk-ant-api03-EXAMPLEEXAMPLEEXAMPLEEXAMPLE": "anthropic-key",
    "glpat-EXAMPLEEXAMPLEEXAMPLE12": "gitlab-token",
    "AIzaSyEXAMPLEEXAMPLEEXAMPLEEXAMPLE12345": "google-api-key",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U": "jwt",
}

BENIGN = [
    "No API key is present in the build",
    "apiKey: import.meta.env.VITE_MAP_KEY",
    "The documented example key AKIAIOSFODNN7EXAMPLE appears in AWS docs",
    "TOKEN_TTL=3600",
    "API_KEY=${OPENAI_API_KEY}",
    "password = os.environ['DB_PASSWORD']",
    "Use pnpm, not npm, in this repository.",
    "see https://example.com/docs/setup",
]


@pytest.mark.parametrize(("text", "kind"), SECRETS.items())
def test_redact_masks_every_secret_kind_and_keeps_the_kind(text: str, kind: str) -> None:
    masked = redact(text)
    assert f"[REDACTED:{kind}]" in masked
    secret = text.split("=", 1)[-1] if kind.startswith(("assigned", "aws-access")) else text
    assert secret not in masked or kind == "aws-access-key"
    assert find_secrets(masked) == []


@pytest.mark.parametrize("text", BENIGN)
def test_redact_leaves_prose_and_references_intact(text: str) -> None:
    assert redact(text) == text
    check_text(text)


def test_redact_is_idempotent() -> None:
    once = redact("\n".join(SECRETS))
    assert redact(once) == once


@pytest.mark.parametrize("text", list(SECRETS))
def test_check_text_refuses_naming_the_kind_without_echoing_the_value(text: str) -> None:
    with pytest.raises(SecretError) as caught:
        check_text(f"remember this: {text}")
    message = str(caught.value)
    assert "secret" in message
    assert SECRETS[text] in message
    for token in text.replace("=", " ").replace(":", " ").split():
        if len(token) > 12:
            assert token not in message


def test_private_spans_are_dropped_even_when_unclosed() -> None:
    assert strip_private("keep <private>my diary</private> this") == "keep  this"
    assert strip_private("keep <PRIVATE>all the rest") == "keep "


@pytest.mark.parametrize(
    "path",
    [
        ".env",
        "config/.env.local",
        "id_rsa",
        "id_ed25519.pub",
        "certs/server.pem",
        "credentials.json",
        "secrets.yaml",
        "app.keystore",
        "home/.ssh/config",
        ".npmrc",
    ],
)
def test_secret_files_are_recognised(path: str) -> None:
    assert is_secret_path(path)


@pytest.mark.parametrize("path", ["src/main.py", ".env.example", "README.md", "docs/keys.md"])
def test_ordinary_files_are_not_secret(path: str) -> None:
    assert not is_secret_path(path)


def test_the_cheap_screen_never_hides_a_secret_the_patterns_find() -> None:
    from memdir.kernel.lang.redact import _MAYBE, _patterns

    samples = [
        *SECRETS,
        "API-KEY: 'abcdefgh12345678'",
        "PRIVATE_KEY=abcdef123456",
        "MY_DSN=postgres-host-1234",
        "CONN_STRING=Server=x;Pwd=abcdef12",
    ]
    for text in samples:
        raw = [m for _, p, _ in _patterns() for m in p.finditer(text)]
        assert not raw or _MAYBE.search(text), text


# Shapes an adversarial pass found unmasked in hook commands, remember and the journal.
SHAPES = [
    "curl -u admin:hunter2hunter2 https://api.example.com/v1",
    'curl -H "Authorization: Bearer abcdef0123456789abcdef0123456789" https://x',
    "curl -H 'X-Api-Key: 9f8e7d6c5b4a39281706f5e4d3c2b1a0' https://x",
    "mysql -u root -phunter2hunter2 prod",
    "mysql -u root -p'hunter2hunter2' prod",
    'mysqldump -u root -p"hunter2hunter2" prod',
    "docker login -u me -p hunter2hunter2 registry.example.com",
    "export DB_PASS=hunter2hunter2",
    "sshpass -p hunter2hunter2 ssh root@host",
    "aws configure set aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYZZZZZZZZZZ",
    "password=hunter2hunter2",
    "db_password=hunter2hunter2",
    "api_key=abcdef1234567890",
    "password: hunter2hunter2",
    "SMTP_PASS=hunter2hunter2",
    "ENCRYPTION_KEY=abcdefgh12345678ZZ",
    "APP_KEY=base64:AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcd=",
    "redis://:supersecretpw@cache:6379",
    "Authorization: Bearer opaqueTokenValue123456",
    "export PASSWORD='with spaces in it'",
    "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
    "dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG",
    "AccountName=acct;AccountKey=abcdEFGHijklMNOPqrstUVWXyz0123456789+/abcdEFGH==;x=y",
    "wget --password=hunter2hunter2 https://x",
    "def connect_aws_AKIAZZZZZZZZZZZZZZZZ():",
    "remember that the staging password is hunter2hunter2.",
]


@pytest.mark.parametrize("text", SHAPES)
def test_common_secret_shapes_are_masked_and_refused(text: str) -> None:
    masked = redact(text)
    assert "[REDACTED:" in masked
    for secret in ("hunter2hunter2", "abcdef0123456789", "9f8e7d6c", "ZZZZZZZZZZ", "supersecretpw"):
        assert secret not in masked
    assert find_secrets(masked) == []
    with pytest.raises(SecretError):
        check_text(text)


@pytest.mark.parametrize(
    "text",
    [
        "The password: required for login",
        "max_tokens: 4096",
        "tokenizer: bert-base-uncased",
        "primary_key: id",
        "ssh -p 2222 user@host",
        "psql -p 5432 -U app",
        'git commit --author "Jane <j@x.org>"',
        "TOKEN_FILE=/run/secrets/token",
        "SECRET_NAME=prod-db-credentials",
        "PWD=/home/user/project",
        "auth: enabled",
        "Use the --token flag to pass a token",
        "the password must be at least 12 characters",
        "export PATH=/usr/local/bin:$PATH",
        "password_hash: bcrypt",
        "The Bearer token goes in the header",
        "the password is required",
    ],
)
def test_talk_about_secrets_is_not_a_secret(text: str) -> None:
    assert redact(text) == text


# A secret keyword in prose, an optional connector, then a credential-shaped value
# (case B-secrets: these were stored and journaled in plain text). text -> (kind, value).
PROSE_SECRETS = {
    "aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYzzzzKEY2": (
        "aws-secret-key",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzzzzKEY2",
    ),
    "AWS_SECRET_ACCESS_KEY is wJalrXUtnFEMI/K7MDENG/bPxRfiCYzzzzKEY2": (
        "aws-secret-key",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzzzzKEY2",
    ),
    "login with password Tr0ub4dor&3": ("prose-secret", "Tr0ub4dor&3"),
    "root pw is Tr0ub4dor&3x": ("prose-secret", "Tr0ub4dor&3x"),
    "the admin password Tr0ub4dor&3q": ("prose-secret", "Tr0ub4dor&3q"),
    "remember that ssh root@10.0.0.5 with password Tr0ub4dor&3": ("prose-secret", "Tr0ub4dor&3"),
    "the api key of Zx9vQ2mL7pR4 is for staging": ("prose-secret", "Zx9vQ2mL7pR4"),
    "the vault passphrase is c0rrect-h0rse-battery": ("prose-secret", "c0rrect-h0rse-battery"),
    "the deploy token was 'gh0stRider77'": ("prose-secret", "gh0stRider77"),
    "use access key Kq8#mZ2!": ("prose-secret", "Kq8#mZ2!"),
    # a qualifier between the word and the value (stored before: a fresh user's trial)
    "The admin password for the staging box is Tr0ub4dor&3xyz": ("prose-secret", "Tr0ub4dor&3xyz"),
    "password for staging is Tr0ub4dor&3xyz": ("prose-secret", "Tr0ub4dor&3xyz"),
    "the token for the CI runner was gh0stRider77": ("prose-secret", "gh0stRider77"),
}

# Ordinary prose about secrets: a keyword followed by a word, a reference or a number.
PROSE_TALK = [
    "the password reset flow sends an email",
    "password is required",
    "use a strong password",
    "token bucket rate limiter",
    "pw is stored in vault",
    "the secret sauce is caching",
    "the secret key-value store",
    "the password sha256 hash",
    "the password for /etc/shadow",
    "pwd is /home/me/project",
    "the token v2 endpoint",
    "pin 123456 is a bad example",
    "Tokens expire after 3600 seconds",
    "a password manager like 1Password",
    "the API key is stored in KEYCHAIN_ITEM",
    "the secret of success",
    "every page is under 18k tokens (ceil(bytes/4)), even a big one",
    "call getToken() for a fresh token",
    "send the password reset link to alice@example.com",
    "the admin password alice@example.com gets the reset link",
    "aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",  # AWS's documented example
    "the password for the admin panel is stored in Vault",
    "the token for each request is refreshed hourly",
    "the password for staging is rotated monthly",
    "the secret to good caching is invalidation",
    "the pin on the board is GPIO17",
]


@pytest.mark.parametrize(("text", "found"), PROSE_SECRETS.items())
def test_a_secret_in_prose_is_masked_and_refused(text: str, found: tuple[str, str]) -> None:
    kind, value = found
    masked = redact(text)
    assert f"[REDACTED:{kind}]" in masked
    assert value not in masked
    assert find_secrets(masked) == []
    with pytest.raises(SecretError, match=kind):
        check_text(text)


@pytest.mark.parametrize("text", PROSE_TALK)
def test_prose_about_a_secret_is_kept(text: str) -> None:
    assert redact(text) == text
    check_text(text)


@pytest.mark.parametrize(
    "text",
    [
        "password " * 12_500,
        "pw is " * 17_000,
        "the admin password with " * 4_200,
        "aws_secret_access_key is " * 4_000,
        "password Tr0ub4dor&3 " * 4_800,
        "TOKEN" * 20_000,
        "password for a b c d " * 5_000,
        "the token for the box is " * 4_000,
    ],
)
def test_a_100_kb_scan_stays_linear(text: str) -> None:
    find_secrets("warm up: password is x")  # compile the patterns outside the timing
    took = []
    for _ in range(3):  # CPU time, best of three: other processes' load is not the scanner's
        started = time.process_time()
        find_secrets(text)
        took.append(time.process_time() - started)
    # ~0.05 s CPU on an idle machine (0.28 s seen with 8 suites sharing 2 cores); the quadratic
    # pattern this guards against took seconds on 100 KB.
    assert min(took) < 0.5
