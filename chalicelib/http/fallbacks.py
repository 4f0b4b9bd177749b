"""Routes every path gets besides its own: HEAD beside GET, OPTIONS, 405 for other methods, 404 elsewhere.

Chalice (and API Gateway) would answer these in their own format; these views make them problem+json, the same
locally and deployed (decisions §3).
"""

from chalice import Chalice, Response

from ..domain.problems import ProblemType
from .responses import problem

MAX_CATCH_ALL_DEPTH = 10
ALL_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
ALLOWED_METHODS: dict[str, list[str]] = {}  # route path -> the methods it answers


def not_found() -> Response:
    return problem(404, ProblemType.NOT_FOUND, "no route matches this path")


def method_not_allowed(allowed: list[str]) -> Response:
    return problem(
        405,
        ProblemType.METHOD_NOT_ALLOWED,
        "this path does not support the method",
        headers={"Allow": ", ".join(allowed)},
    )


def _method_not_allowed_view(allowed: list[str]):
    def view(**_params):
        return method_not_allowed(allowed)

    return view


def _options_view(allowed: list[str]):
    def view(**_params):
        # The edge middleware adds the CORS preflight headers when the Origin is allowed.
        return Response(body="", status_code=204, headers={"Allow": ", ".join(allowed)})

    return view


def _head_view(get_view):
    def view(**params):
        return get_view(**params)  # the edge middleware drops the body of every HEAD answer

    return view


def install(app: Chalice) -> None:
    """Called after every blueprint is registered: each known path gets HEAD where it has GET, OPTIONS, and a
    405 view for the methods it lacks; catch-all paths /{p1}, /{p1}/{p2}, ... answer 404 (literal routes are
    matched before variable ones)."""
    for path, entries in list(app.routes.items()):
        methods = set(entries) | {"OPTIONS"} | ({"HEAD"} if "GET" in entries else set())
        allowed = ALLOWED_METHODS[path] = sorted(methods)
        if "GET" in entries and "HEAD" not in entries:
            app.route(path, methods=["HEAD"], content_types=["*/*"], name=f"head_{path}")(
                _head_view(entries["GET"].view_function)
            )
        app.route(path, methods=["OPTIONS"], content_types=["*/*"], name=f"options_{path}")(_options_view(allowed))
        missing = [method for method in ALL_METHODS if method not in methods]
        if missing:  # one registration for all of them: every app import, so every cold start, pays for each
            app.route(path, methods=missing, content_types=["*/*"], name=f"method_not_allowed_{path}")(
                _method_not_allowed_view(allowed)
            )
    for depth in range(0, MAX_CATCH_ALL_DEPTH + 1):
        path = "/" + "/".join(f"{{p{i}}}" for i in range(1, depth + 1))
        if path in app.routes:
            continue
        app.route(path, methods=list(ALL_METHODS), content_types=["*/*"], name=f"not_found_{depth}")(
            lambda **_: not_found()
        )
