"""The Lambda entry point: the Chalice app, its blueprints and middleware. No logic lives here."""
from chalice import Chalice

from chalicelib.http import api, categories, products, webhooks
from chalicelib.jobs import handlers

app = Chalice(app_name="supplier-ordering")
app.register_middleware(api.problems_middleware, "http")
for blueprint in (products.bp, categories.bp, webhooks.bp, handlers.bp):
    app.register_blueprint(blueprint)
api.install_fallbacks(app)
