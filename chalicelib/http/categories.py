"""Routes of product categories (decisions §5)."""
from chalice import Blueprint

from ..service import catalogue
from ..service.catalogue import Category, CategoryBody, CategoryList
from .api import Call, endpoint
from .responses import no_content, ok
from .responses import page as page_body

bp = Blueprint(__name__)


@endpoint(bp, "/categories", "GET", response=CategoryList, paged=True)
def list_categories(call: Call):
    limit, cursor = call.page()
    page = catalogue.list_categories(call.account, limit, cursor)
    return page_body("categories", page.items, page.cursor)


@endpoint(bp, "/categories/{category_id}", "PUT", body=CategoryBody, response=Category)
def put_category(call: Call, category_id: str):
    return ok(catalogue.put_category(call.account, category_id, call.body()))


@endpoint(bp, "/categories/{category_id}", "GET", response=Category)
def get_category(call: Call, category_id: str):
    return ok(catalogue.get_category(call.account, category_id))


@endpoint(bp, "/categories/{category_id}", "DELETE", status=204)
def delete_category(call: Call, category_id: str):
    catalogue.delete_category(call.account, category_id)
    return no_content()
