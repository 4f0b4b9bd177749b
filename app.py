"""The Lambda entry point: the Chalice app, its blueprints and middleware. No logic lives here."""
from chalice import Chalice

from chalicelib.http import api, categories, customer_portal, customers, docs, logs, pricing, products, settings

# Powertools (chalicelib.http.logs) formats this app's logger; Chalice must not add a plain-text handler too.
app = Chalice(app_name="supplier-ordering", configure_logs=False)
app.register_middleware(logs.request_log_middleware, "http")  # outermost: logs the final status
app.register_middleware(api.problems_middleware, "http")
for blueprint in (products.bp, categories.bp, customers.bp, settings.bp, pricing.bp, customer_portal.bp, docs.bp):
    app.register_blueprint(blueprint)
api.install_fallbacks(app)
