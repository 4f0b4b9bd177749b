"""`chalice local`, except that requests of every HTTP method reach the app.

    python -m chalicelib.localdev.api_server local --stage local --port 8000 ...   (the arguments of `chalice`)

chalice local's server (http.server) answers a method it has no `do_<METHOD>` for, such as TRACE, itself with a
501 HTML page. No request may yield a 5xx or a non-problem body (decisions §3), so here every method goes
through the app like GET does, and the app answers 405 or 404 as problem+json.
"""
import sys

from chalice import local
from chalice.cli import main


class AnyMethodHandler(local.ChaliceRequestHandler):
    def __getattr__(self, name: str):
        if name.startswith("do_"):
            return self._generic_handle
        raise AttributeError(name)


def create_local_server(app_obj, config, host: str, port: int) -> local.LocalDevServer:
    return local.LocalDevServer(app_obj, config, host, port, handler_cls=AnyMethodHandler)


# The chalice command line builds its server through this module function.
local.create_local_server = create_local_server

if __name__ == "__main__":
    sys.exit(main())
