"""`chalice local`, made to behave like API Gateway in front of one Lambda instance.

    python -m chalicelib.localdev.api_server local --stage local --port 8000 ...   (the arguments of `chalice`)

Three changes to chalice local's server (decisions §1, §3):
- Every HTTP method reaches the app. http.server answers a method it has no `do_<METHOD>` for, such as TRACE,
  itself with a 501 HTML page; here the app answers 405 or 404 as problem+json.
- The app handles one request at a time, as one Lambda instance does. chalice local runs each connection in
  its own thread on one shared `app`, and Chalice keeps `app.current_request` on that object, so two requests
  at once could read each other's headers and token. Connections are still read and answered in their own
  threads (a slow client holds up nobody); only the call into the app is serialised.
- Path parameters reach the app decoded, as API Gateway passes them (`/deliveries/%C2%B2` has the id "²");
  chalice local passes them still percent-encoded, which would hide from local tests and contract fuzzing what
  the app gets in AWS.
- A listen backlog of 1024 instead of http.server's 5, so a burst of new connections waits in the queue
  instead of being reset.
"""
import sys
import threading
from http.server import BaseHTTPRequestHandler
from urllib.parse import unquote

from chalice import local
from chalice.cli import main

LISTEN_BACKLOG = 1024


class OneRequestAtATimeGateway(local.LocalGateway):
    """The app sees one request at a time, whichever connection thread brings it, with decoded path parameters."""

    _app_lock = threading.Lock()  # one per process, shared by every connection's gateway

    def handle_request(self, *args, **kwargs):
        with self._app_lock:
            return super().handle_request(*args, **kwargs)

    def _generate_lambda_event(self, *args, **kwargs):
        event = super()._generate_lambda_event(*args, **kwargs)
        if event.get("pathParameters"):
            event["pathParameters"] = {name: unquote(value) for name, value in event["pathParameters"].items()}
        return event


class Handler(local.ChaliceRequestHandler):
    def __init__(self, request, client_address, server, app_object, config) -> None:
        # BaseHTTPRequestHandler handles the request inside __init__, so the gateway is set before it runs.
        self.local_gateway = OneRequestAtATimeGateway(app_object, config)
        BaseHTTPRequestHandler.__init__(self, request, client_address, server)

    def _send_http_response(self, code, headers, body) -> None:
        if self.command != "HEAD":
            super()._send_http_response(code, headers, body)
            return
        # chalice local would write Content-Length: 0 beside the GET's length that http/edge.py sets on a HEAD
        # answer; send the headers alone, as API Gateway does.
        headers.setdefault("Content-Length", "0")
        self.send_response(code)
        self._send_headers(headers)

    def __getattr__(self, name: str):
        if name.startswith("do_"):
            return self._generic_handle
        raise AttributeError(name)


class Server(local.ThreadedHTTPServer):
    request_queue_size = LISTEN_BACKLOG


def create_local_server(app_obj, config, host: str, port: int) -> local.LocalDevServer:
    return local.LocalDevServer(app_obj, config, host, port, handler_cls=Handler, server_cls=Server)


# The chalice command line builds its server through this module function.
local.create_local_server = create_local_server

if __name__ == "__main__":
    sys.exit(main())
