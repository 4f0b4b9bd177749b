"""The app behind a real HTTP server in this process: chalice local's server, the one `make run` uses."""

import threading
from contextlib import contextmanager


@contextmanager
def serving():
    """Yield the base URL of the app on 127.0.0.1 (a free port); the table is whatever the test set up."""
    from chalice.config import Config

    from app import app
    from chalicelib.localdev.api_server import create_local_server

    server = create_local_server(app, Config.create(), "127.0.0.1", 0)
    thread = threading.Thread(target=server.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server.server_address[1]}"
    finally:
        server.shutdown()
        server.server.server_close()
        thread.join(timeout=10)
