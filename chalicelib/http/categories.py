"""Routes of product categories (decisions §5)."""

from chalice import Blueprint

from ..domain.limits import CATEGORIES
from .call import Call
from .endpoint import endpoint
from .responses import no_content, ok
from .responses import page as page_body

bp = Blueprint(__name__)
# The default and the largest `limit`: one page without a cursor holds every category (decisions §4), as barmate
# catalogue-sync clients read it.
PAGE_SIZES = (CATEGORIES, CATEGORIES)


@endpoint(bp, "/categories", "GET", response="domain.category:CategoryList", paged=PAGE_SIZES)
def list_categories(call: Call):
    """List categories by id"""
    from ..service import catalogue

    limit, cursor = call.page(PAGE_SIZES)
    page = catalogue.list_categories(call.account, limit, cursor)
    return page_body("categories", page.items, page.cursor)


@endpoint(bp, "/categories", "POST", body="domain.category:NewCategory", response="domain.category:Category")
def create_category(call: Call):
    """Create a category with the id given in the body (as barmate catalogue-sync tools do)"""
    from ..service import catalogue

    return ok(catalogue.create_category(call.account, call.body()))


@endpoint(
    bp, "/categories/{category_id}", "PUT", body="domain.category:CategoryBody", response="domain.category:Category"
)
def put_category(call: Call, category_id: str):
    """Create or rename a category"""
    from ..service import catalogue

    return ok(catalogue.put_category(call.account, category_id, call.body()))


@endpoint(bp, "/categories/{category_id}", "GET", response="domain.category:Category")
def get_category(call: Call, category_id: str):
    """Read one category"""
    from ..service import catalogue

    return ok(catalogue.get_category(call.account, category_id))


@endpoint(bp, "/categories/{category_id}", "DELETE", status=204)
def delete_category(call: Call, category_id: str):
    """Delete a category no product uses"""
    from ..service import catalogue

    catalogue.delete_category(call.account, category_id)
    return no_content()
