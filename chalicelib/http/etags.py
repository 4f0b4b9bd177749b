"""ETag and If-Match: a product's or a delivery's revision, quoted as RFC 9110 wants."""


def etag(revision: str) -> str:
    return f'"{revision}"'


def if_match(header: str | None) -> str | None:
    """The revision an If-Match header asks for; None when absent or '*' (any current version)."""
    if header is None:
        return None
    value = header.strip()
    if value == "*":
        return None
    return value.removeprefix("W/").strip('"')
