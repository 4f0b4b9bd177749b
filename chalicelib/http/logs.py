"""Structured request logs: one JSON line per request on stdout (Powertools Logger), for CloudWatch Logs Insights.

A line names the request, the account, the route template, the status and the duration. It never holds the
Authorization header, a body, a query string or any other client-supplied value that could be a secret.
"""
import functools
import json
import sys
import time

from ..lazy import lazy
from .request_ids import request_id
from .responses import PROBLEM

powertools = lazy("aws_lambda_powertools")  # ~10 ms to import, paid by the first request only
SERVICE = "supplier-ordering"

_process = {"cold": True}


class _CurrentStdout:
    """Writes to whatever sys.stdout is at the time of the write, so a replaced stdout (pytest) is honoured."""

    def write(self, text: str) -> int:
        return sys.stdout.write(text)

    def flush(self) -> None:
        sys.stdout.flush()


@functools.cache
def logger():
    """The service logger, made on first use: importing Powertools costs ~10 ms, paid by the first request only.

    It owns the 'supplier-ordering' logger, which is also Chalice's app.log, so Chalice's own error reports
    (unhandled exceptions) come out as JSON lines too.
    """
    return powertools.Logger(service=SERVICE, stream=_CurrentStdout(), use_rfc3339=True)


def _problem_type(response) -> str | None:
    if response is None or not response.headers.get("Content-Type", "").startswith(PROBLEM):
        return None
    try:
        return json.loads(response.body).get("type")
    except (TypeError, ValueError, AttributeError):
        return None


def request_line(request, response, seconds: float) -> dict:
    """The fields of one request's log line; only values the service itself chose or resolved."""
    principal = getattr(request, "principal", None)
    status = response.status_code if response is not None else 500
    line = {
        "request_id": request_id(request),
        "method": getattr(request, "method", None),
        "route": (getattr(request, "context", None) or {}).get("resourcePath"),
        "status": status,
        "duration_ms": round(seconds * 1000, 2),
        "account": principal.account if principal else None,
        "cold_start": _process["cold"],
    }
    for key in ("customer_id", "token_id"):
        if principal and getattr(principal, key):
            line[key] = getattr(principal, key)
    problem_type = _problem_type(response)
    if problem_type:
        line["problem"] = problem_type
    return line


def request_log_middleware(event, get_response):
    """Chalice http middleware: registered first, so it sees the final status of every request."""
    log = logger()  # before the handler runs, so Chalice's own error reports are JSON as well
    started = time.perf_counter()
    response = None
    try:
        response = get_response(event)
        return response
    finally:
        line = request_line(event, response, time.perf_counter() - started)
        _process["cold"] = False
        (log.error if line["status"] >= 500 else log.info)("request", extra=line)
