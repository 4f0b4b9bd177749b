"""The Lambda entry point: the Chalice app, its routes, jobs and middleware. No logic lives here.

Every route is registered from http/route_table.py and its module imported on the route's first request, so a
cold start loads what its request needs (bench/README.md).
"""

from chalice import Chalice

from chalicelib.http import edge, fallbacks, logs, route_table
from chalicelib.jobs import triggers

# The request log (chalicelib.http.logs) formats this app's logger; Chalice must not add a plain-text handler too.
app = Chalice(app_name="supplier-ordering", configure_logs=False)
app.api.binary_types.append("text/csv")  # order files and imports: latin1 bytes must pass API Gateway untouched
app.api.binary_types.append("multipart/form-data")  # a catalogue file uploaded as a form, in any charset
app.register_middleware(logs.request_log_middleware, "http")  # outermost: logs the final status
app.register_middleware(edge.edge_middleware, "http")
route_table.register(app)
app.register_blueprint(triggers.bp)  # the jobs: Chalice deploys each as its own function
fallbacks.install(app)
