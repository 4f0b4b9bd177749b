"""Structured request logs: one JSON line per request on stdout, for CloudWatch Logs Insights.

A line names the request, the account, the route template, the status and the duration. It never holds the
Authorization header, a body, a query string or any other client-supplied value that could be a secret.

The lines have the shape Powertools' Logger writes (level, location, message, timestamp, service, then the
fields), made by the standard library: importing Powertools costs ~12 ms (its package loads metrics and tracing
too), paid by every cold start, and a JSON line needs one json.dumps (bench/README.md).
"""

import datetime as dt
import functools
import json
import logging
import os
import sys
import time

from .request_ids import request_id
from .responses import PROBLEM

SERVICE = "supplier-ordering"
LEVEL_VARIABLE = "POWERTOOLS_LOG_LEVEL"  # the name deployments already set (deploy_template.py)

_process = {"cold": True}


class _CurrentStdout:
    """Writes to whatever sys.stdout is at the time of the write, so a replaced stdout (pytest) is honoured."""

    def write(self, text: str) -> int:
        return sys.stdout.write(text)

    def flush(self) -> None:
        sys.stdout.flush()


class JsonLines(logging.Formatter):
    """One JSON object per record: the standard keys, then the record's `fields` that have a value, then any
    exception."""

    def format(self, record: logging.LogRecord) -> str:
        line = {
            "level": record.levelname,
            "location": f"{record.funcName}:{record.lineno}",
            "message": record.getMessage(),
            "timestamp": dt.datetime.fromtimestamp(record.created, dt.timezone.utc).isoformat(timespec="milliseconds"),
            "service": SERVICE,
        }
        line.update((key, value) for key, value in getattr(record, "fields", {}).items() if value is not None)
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
            line["exception_name"] = record.exc_info[0].__name__ if record.exc_info[0] else None
        return json.dumps(line, separators=(",", ":"), default=str)


class _NotOurs(logging.Filter):
    """On the root logger's handlers (the Lambda runtime's): our records are written once, by our own handler."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.name == SERVICE or record.name.startswith(SERVICE + "."))


@functools.cache
def logger() -> logging.Logger:
    """The service logger, set up on first use. It is also Chalice's app.log, so Chalice's own error reports
    (unhandled exceptions) come out as JSON lines too. Records still reach the root logger (pytest's caplog), whose
    other handlers skip them."""
    log = logging.getLogger(SERVICE)
    handler = logging.StreamHandler(_CurrentStdout())
    handler.setFormatter(JsonLines())
    log.addHandler(handler)
    log.setLevel((os.environ.get(LEVEL_VARIABLE) or "INFO").upper())
    for root_handler in logging.root.handlers:
        if type(root_handler).__module__ != "_pytest.logging":
            root_handler.addFilter(_NotOurs())
    return log


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
        (log.error if line["status"] >= 500 else log.info)("request", extra={"fields": line})
