"""The Lambda entry point: the Chalice app, its blueprints and middleware. No logic lives here."""
from chalice import Chalice

from chalicelib.http import (
    categories,
    customer_deliveries,
    customer_portal,
    customers,
    deliveries,
    docs,
    edge,
    fallbacks,
    imports,
    events,
    logs,
    pricing,
    products,
    settings,
    webhooks,
)
from chalicelib.jobs import handlers

# Powertools (chalicelib.http.logs) formats this app's logger; Chalice must not add a plain-text handler too.
app = Chalice(app_name="supplier-ordering", configure_logs=False)
app.api.binary_types.append("text/csv")  # order files and imports: latin1 bytes must pass API Gateway untouched
app.api.binary_types.append("multipart/form-data")  # a catalogue file uploaded as a form, in any charset
app.register_middleware(logs.request_log_middleware, "http")  # outermost: logs the final status
app.register_middleware(edge.edge_middleware, "http")
BLUEPRINTS = (
    products.bp,
    categories.bp,
    customers.bp,
    settings.bp,
    pricing.bp,
    customer_portal.bp,
    deliveries.bp,
    customer_deliveries.bp,
    webhooks.bp,
    imports.bp,
    events.bp,
    handlers.bp,
    docs.bp,
)
for blueprint in BLUEPRINTS:
    app.register_blueprint(blueprint)
fallbacks.install(app)
