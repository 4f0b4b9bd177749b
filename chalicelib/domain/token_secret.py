"""What a token secret may be: the one rule that authentication reads and the admin CLI registers by.

A secret travels in `Authorization: token <secret>`, which is split at its first space and stripped, header
values cannot carry control characters, and their bytes are read as latin-1 (a UTF-8 "é" arrives as "Ã©"); a
secret outside this rule could be registered but never log in.
"""

MAX_SECRET_LENGTH = 512
SECRET_RULE = f"must be 1 to {MAX_SECRET_LENGTH} printable ASCII characters with no spaces"


def is_secret(secret: str | None) -> bool:
    """True for a secret that can arrive in an Authorization header."""
    return bool(secret) and len(secret) <= MAX_SECRET_LENGTH and all("!" <= c <= "~" for c in secret)
