"""What a table stream record asks of the background work: the store reads its image, the jobs schedule it."""

from dataclasses import dataclass

from ..store import events, import_items, product_images


@dataclass(frozen=True)
class Woken:
    event: dict | None  # an event to send now (new, or a resend just queued)
    image: bool  # a product image was queued
    import_: bool  # an import waits for a slice


def woken(record_name: str, new_image: dict | None) -> Woken:
    """Only new work wakes the jobs, so their own writes (claims, attempts, checkpoints) do not trigger them."""
    image = new_image or {}
    return Woken(
        events.woken(record_name, image),
        product_images.woken(record_name, image),
        import_items.woken(record_name, image),
    )
