"""Use cases of customers: profile, settings and customer tokens (decisions §2, §9)."""

from ..domain.errors import NotFound, invalid
from ..domain.feed import Change, ChangeType
from ..domain.identifiers import ID_RULE, is_identifier
from ..domain.values import with_substitution_policy
from ..store import customers, outcomes, tokens
from ..store.paging import Page
from . import documents
from .accounts import CUSTOMER, issued, token_not_found
from .paging import paged
from .standing_rules import standing_rules_changed

# Validation (pydantic) is imported by the writes that use it: a cold GET never imports it.


def _not_found(customer_id: str) -> NotFound:
    return NotFound(f"customer {customer_id} does not exist")


def get_customer(account: str, customer_id: str) -> dict:
    customer = customers.get(account, customer_id) if is_identifier(customer_id) else None
    if customer is None:
        raise _not_found(customer_id)
    return with_substitution_policy(customer)


@paged
def list_customers(account: str, limit: int, cursor: str | None) -> Page:
    page = customers.list_page(account, limit, cursor)
    return Page([with_substitution_policy(customer) for customer in page.items], page.cursor)


def put_customer(account: str, customer_id: str, body) -> dict:
    """Create the customer or replace its profile; its settings are kept."""
    from ..domain import customer as customer_rules

    if not is_identifier(customer_id):
        raise invalid("id", ID_RULE)
    profile = customer_rules.validate_profile(body, customer_id)
    return with_substitution_policy(
        documents.update(
            account,
            customers.key(account, customer_id),
            profile.set,
            profile.remove,
            create_with=profile.set,
            created=Change(ChangeType.CUSTOMER_CREATED, customer_id),
            updated=Change(ChangeType.CUSTOMER_UPDATED, customer_id),
            shown=with_substitution_policy,
        )
    )


def patch_customer(account: str, customer_id: str, body) -> dict:
    """Change settings of an existing customer: one conditional update; null clears a setting."""
    from ..domain import customer as customer_rules

    if not is_identifier(customer_id):
        raise _not_found(customer_id)
    changes = customer_rules.validate_settings_patch(body)
    customer = documents.update(
        account,
        customers.key(account, customer_id),
        changes.set,
        changes.remove,
        updated=Change(ChangeType.CUSTOMER_UPDATED, customer_id),
        also=lambda before, after: standing_rules_changed(account, before, after),
        shown=with_substitution_policy,
    )
    if isinstance(customer, outcomes.Gone):
        raise _not_found(customer_id)
    return with_substitution_policy(customer)


def create_customer_token(account: str, customer_id: str) -> dict:
    get_customer(account, customer_id)
    token_id, secret = issued(tokens.create(account, CUSTOMER, customer_id=customer_id))
    return {"id": token_id, "token": secret, "customer_id": customer_id}


def revoke_customer_token(account: str, customer_id: str, token_id: str) -> None:
    if not is_identifier(customer_id) or not token_id or len(token_id) > 128:
        raise token_not_found(token_id)
    if isinstance(tokens.revoke(account, token_id, customer_id=customer_id), outcomes.Gone):
        raise token_not_found(token_id)
