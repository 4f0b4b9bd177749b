"""The Lambda entry point: the Chalice app, its blueprints and middleware. No logic lives here."""
from chalice import Chalice

from chalicelib.http import api, categories, customer_deliveries, deliveries, products

app = Chalice(app_name="supplier-ordering")
app.api.binary_types.append("text/csv")  # order files: latin1 bytes must pass API Gateway untouched
app.register_middleware(api.problems_middleware, "http")
for blueprint in (products.bp, categories.bp, deliveries.bp, customer_deliveries.bp):
    app.register_blueprint(blueprint)
api.install_fallbacks(app)
