"""`chalice local`, made to behave like API Gateway in front of Lambda instances, one instance per process.

    python -m chalicelib.localdev.api_server local --stage local --port 8000 ...   (the arguments of `chalice`)

Changes to chalice local's server (decisions §1, §3):
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
- Several instances on one port (`make run`, CONCURRENCY): run.py binds the listening socket once and starts
  this server in that many processes, each given the socket's descriptor in LOCAL_API_LISTEN_FD. The kernel
  hands each new connection to one process waiting in accept(), and a process waits until its app is idle
  before it accepts, so a new connection goes to a free instance when there is one, as API Gateway sends a
  request to a free Lambda instance. Each process writes one byte to LOCAL_API_READY_FD once its app is loaded,
  starts accepting once run.py has made the socket listen, and exits soon after run.py is gone.
- LOCAL_INSTANCE_HEADER=1 (tests only) adds `X-Local-Instance: <pid>` to every answer, so a test can see which
  process answered; nothing sets it otherwise, and the deployed service never runs this module.
"""

import os
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler
from urllib.parse import unquote

from chalice import local
from chalice.cli import main

LISTEN_BACKLOG = 1024
LISTEN_FD_VARIABLE = "LOCAL_API_LISTEN_FD"
READY_FD_VARIABLE = "LOCAL_API_READY_FD"
INSTANCE_HEADER = os.environ.get("LOCAL_INSTANCE_HEADER") == "1"


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

    def end_headers(self) -> None:
        if INSTANCE_HEADER:
            self.send_header("X-Local-Instance", str(os.getpid()))
        super().end_headers()

    def __getattr__(self, name: str):
        if name.startswith("do_"):
            return self._generic_handle
        raise AttributeError(name)


class Server(local.ThreadedHTTPServer):
    """Binds its own socket, or, given LOCAL_API_LISTEN_FD, serves on the one that run.py bound for every instance."""

    request_queue_size = LISTEN_BACKLOG

    def __init__(self, server_address, handler_class) -> None:
        inherited = os.environ.pop(LISTEN_FD_VARIABLE, None)
        self.shared = inherited is not None
        self.parent = os.getppid()
        super().__init__(server_address, handler_class, bind_and_activate=not self.shared)
        if self.shared:
            self.socket.close()
            self.socket = socket.socket(fileno=int(inherited))
            # Every instance waits in select() on this socket and all of them wake for a new connection: the
            # one that takes it wins, the others' accept() must return at once instead of waiting for the next.
            self.socket.setblocking(False)
            self.server_address = self.socket.getsockname()
            self.server_name, self.server_port = self.server_address[0], self.server_address[1]

    def get_request(self):
        if self.shared:
            # A busy instance leaves new connections to idle ones: it accepts only once its app is free.
            with OneRequestAtATimeGateway._app_lock:
                pass
        request, address = super().get_request()
        if self.shared:
            request.setblocking(True)  # where accept() passes the listening socket's O_NONBLOCK on (BSD, macOS)
        return request, address

    def service_actions(self) -> None:
        # Called at least every half second: run.py gone (killed) means stop, where PR_SET_PDEATHSIG did not.
        if self.shared and os.getppid() != self.parent:
            os._exit(1)

    def wait_until_listening(self) -> None:
        """run.py makes the shared socket listen once every instance is ready; until then a connection is refused."""
        while not self.socket.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):
            self.service_actions()
            time.sleep(0.05)


class DevServer(local.LocalDevServer):
    def serve_forever(self) -> None:
        if not self.server.shared:
            super().serve_forever()
            return
        ready = os.environ.pop(READY_FD_VARIABLE, None)
        if ready is not None:
            os.write(int(ready), b".")
            os.close(int(ready))
        self.server.wait_until_listening()
        self.server.serve_forever()  # run.py prints the address once for all instances


def create_local_server(app_obj, config, host: str, port: int) -> local.LocalDevServer:
    return DevServer(app_obj, config, host, port, handler_cls=Handler, server_cls=Server)


# The chalice command line builds its server through this module function.
local.create_local_server = create_local_server

if __name__ == "__main__":
    sys.exit(main())
