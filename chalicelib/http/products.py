"""Routes of the product catalogue (interface: Products; decisions §5)."""

from chalice import Blueprint

from .call import Call
from .endpoint import endpoint
from .etags import etag, if_match
from .responses import no_content, ok, page_of_texts

bp = Blueprint(__name__)


def _product(view):
    return ok(view.body, headers={"ETag": etag(view.revision)})


@endpoint(bp, "/products", "GET", response="domain.product:ProductList", paged=True)
def list_products(call: Call):
    """List products by id"""
    from ..service import catalogue

    limit, cursor = call.page()
    page = catalogue.list_products(call.account, limit, cursor)
    return page_of_texts("products", [p.text for p in page.items], page.cursor)


@endpoint(bp, "/products", "POST", body="domain.product:NewProduct", response="domain.product:Product")
def create_product(call: Call):
    """Create a product (400 when the id exists; PUT replaces)"""
    from ..service import catalogue

    return _product(catalogue.create_product(call.account, call.body()))


@endpoint(bp, "/products/{product_id}", "GET", response="domain.product:Product")
def get_product(call: Call, product_id: str):
    """Read one product, with its ETag"""
    from ..service import catalogue

    return _product(catalogue.get_product(call.account, product_id))


@endpoint(bp, "/products/{product_id}", "PUT", body="domain.product:Product", response="domain.product:Product")
def put_product(call: Call, product_id: str):
    """Create or replace a product"""
    from ..service import catalogue

    return _product(catalogue.put_product(call.account, product_id, call.body(), if_match(call.header("if-match"))))


@endpoint(bp, "/products/{product_id}", "PATCH", body="domain.product:ProductPatch", response="domain.product:Product")
def patch_product(call: Call, product_id: str):
    """Change some fields of a product; null removes an optional one"""
    from ..service import catalogue

    return _product(catalogue.patch_product(call.account, product_id, call.body(), if_match(call.header("if-match"))))


@endpoint(bp, "/products/{product_id}", "DELETE", status=204)
def delete_product(call: Call, product_id: str):
    """Delete a product no delivery contains"""
    from ..service import catalogue

    catalogue.delete_product(call.account, product_id, if_match(call.header("if-match")))
    return no_content()
