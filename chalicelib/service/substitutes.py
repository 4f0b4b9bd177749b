"""Substitutes named by a response or a delivery note (decisions §18): what they are checked against, read once (the
customer's policy, the products and their pricing, the deposit types, the account's time zone), and what their write
adds: the deposit basis with their packaging, and each product whose packaging charges deposits pinned to its
revision as read (decisions §15's delete guard, as for an order)."""

from dataclasses import dataclass

from ..domain import substitutions as rules
from ..domain.deposits import counted_responses
from ..store import delivery_writes, order_context, outcomes
from .ordering import load_context, pinned_products


@dataclass
class Substitutes:
    account: str
    customer_id: str | None
    given: list | None  # the body's SubstitutionBody list; None when it names none
    context: order_context.OrderContext | None

    def shown(self, delivery: dict, basis: dict | None, stated: dict | None = None) -> list[dict] | None:
        """The substitutes as the delivery shows them (ValidationFailed naming each wrong one), checked against the
        delivery as it is now; None when none were given."""
        if not self.given:
            return self.given
        responses = counted_responses(delivery, basis)
        on = rules.price_date(delivery["request"], responses, stated, self.context.settings)
        return rules.substituted(self.given, delivery, self.context, on)

    def basis(self, basis: dict | None) -> dict | None:
        """The delivery's deposit basis with the substitutes' packaging."""
        if not self.given:
            return basis
        added = rules.packagings(self.given, self.context)
        return rules.with_packagings(basis, added, self.context.deposit_types)

    def checks(self) -> list:
        """Each substitute is marked used in the write, as an ordered product is (decisions §5: a product a delivery
        holds is not deleted), and one whose packaging charges deposits must still be as read (Changed otherwise)."""
        named = list(dict.fromkeys(s.id for s in self.given or ()))
        pinned = pinned_products(self.context, named)
        changed = outcomes.Changed()
        return [
            delivery_writes.marking_used(self.account, pid, pinned.get(pid), pid in self.context.used, changed)
            for pid in named
        ]

    def read_again(self) -> None:
        """A pinned product changed meanwhile (Changed): read what they are checked against again, consistently."""
        self.context = _context(self.account, self.customer_id, self.given or [], consistent=True)


def _context(account: str, customer_id: str | None, given: list, consistent: bool = False):
    return load_context(account, customer_id, list(dict.fromkeys(s.id for s in given)), consistent=consistent)


def read(account: str, delivery: dict, given: list | None, always: bool = False) -> Substitutes:
    """What `given` is checked against, read with one BatchGetItem when there are any (or `always`: a note needs the
    account's time zone and the customer whatever it names)."""
    customer_id = delivery["request"].get("customer_id")
    context = _context(account, customer_id, given or []) if given or always else None
    return Substitutes(account, customer_id, given, context)
