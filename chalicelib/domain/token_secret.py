"""What a token secret may be: the one rule that authentication reads and the admin CLI registers by.

A secret travels in `Authorization: token <secret>`, which is split at its first space and stripped, and header
values cannot carry control characters; a secret outside this rule could be registered but never log in.
"""
MAX_SECRET_LENGTH = 512
SECRET_RULE = f"must be 1 to {MAX_SECRET_LENGTH} characters with no spaces or control characters"


def is_secret(secret: str | None) -> bool:
    """True for a secret that can arrive in an Authorization header."""
    return (
        bool(secret)
        and len(secret) <= MAX_SECRET_LENGTH
        and secret == secret.strip()
        and not any(c <= " " or c == "\x7f" for c in secret)
    )
