"""Downloading a product's image: the use case the image job (jobs/images.py) runs (decisions §5 and §10).

A product write that carries an image queues it (store/product_images.marking, in the same UpdateItem). This
job downloads queued images: http/https only, every address checked (private, loopback, link-local, reserved
and multicast refused unless ALLOW_PRIVATE_IMAGE_HOSTS), at most 3 redirects, 15 s in all, at most 10 MiB,
Content-Type image/*. No object store is part of the stack, so the bytes are not kept: the job records what it
found (size, content type, sha256) and fills the image's `etag` (the response ETag, else the sha256) and
`last_modified` (the response Last-Modified, else the download time) where the client gave none.
A failure is recorded on the item (`image_error`) and never undoes the product write; there is no automatic
retry: writing the product again queues the image again. A product item too close to DynamoDB's item limit to
hold the result ends FAILED all the same (without the details), never stuck DOWNLOADING; whatever goes wrong
with one product is logged and the run goes on with the next.
"""

import datetime as dt
import email.utils
import hashlib
import logging

from .. import config
from ..adapters import outbound
from ..domain.event_policy import error_text
from ..domain.feed import product_change
from ..domain.limits import IMAGE_DOWNLOAD_SECONDS, SHORT_TEXT_CHARS
from ..domain.timestamps import iso
from ..store import outcomes, product_images
from ..store.unit_of_work import unit_of_work
from . import clock, contention

log = logging.getLogger("supplier-ordering.images")

MAX_BYTES = 10 * 1024 * 1024
MAX_REDIRECTS = 3
LEASE = dt.timedelta(seconds=60)
FINISH_ATTEMPTS = 3


def _require_image(status: int, headers) -> None:
    if status != 200:
        raise outbound.OutboundError(f"the server answered {status}")
    content_type = (headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
    if not content_type.startswith("image/"):
        raise outbound.Refused(f"Content-Type {content_type or '(none)'} is not an image/* type")


def _last_modified(header: str | None, now: dt.datetime) -> str:
    if header:
        try:
            return iso(email.utils.parsedate_to_datetime(header))
        except (TypeError, ValueError):
            pass
    return iso(now)


def fetch(url: str, now: dt.datetime) -> dict:
    """Download one image; what it found, or OutboundError saying why not."""
    response = outbound.request(
        "GET",
        url,
        headers={"Accept": "image/*", "User-Agent": "supplier-ordering-images/1"},
        timeout=IMAGE_DOWNLOAD_SECONDS,
        allow_private=config.allow_private_image_hosts(),
        max_bytes=MAX_BYTES,
        max_redirects=MAX_REDIRECTS,
        before_body=_require_image,
    )
    sha256 = hashlib.sha256(response.body).hexdigest()
    etag = (response.headers.get("ETag") or "").strip()
    return {
        "url": url,
        "content_type": response.headers.get("Content-Type").split(";", 1)[0].strip().lower(),
        "size": len(response.body),
        "sha256": sha256,
        "etag": etag if 0 < len(etag) <= SHORT_TEXT_CHARS else sha256,
        "last_modified": _last_modified(response.headers.get("Last-Modified"), now),
        "downloaded_at": iso(now),
    }


def _filled(data: dict, meta: dict) -> dict | None:
    """The product with etag/last_modified filled where missing; None when nothing changes."""
    image = data["image"]
    if "etag" in image and "last_modified" in image:
        return None
    filled = dict(image)
    filled.setdefault("etag", meta["etag"])
    filled.setdefault("last_modified", meta["last_modified"])
    return {**data, "image": filled}


def _already_known(item: dict) -> bool:
    """The same URL was downloaded before and the client gave both cache fields: nothing to learn."""
    image, meta = item["data"]["image"], item.get("image_meta") or {}
    return meta.get("url") == image["url"] and "etag" in image and "last_modified" in image


def _finish(
    item: dict, now: dt.datetime, data: dict | None = None, meta: dict | None = None, error: dict | None = None
) -> outcomes.Refusal | None:
    """Record the download's outcome; a new document is a product.updated in the same transaction."""
    account, product_id = product_images.product_of(item)
    with unit_of_work(account, now) as uow:
        uow.add(product_images.finishing(item, data=data, meta=meta, error=error))
        if data is not None:
            uow.record(product_change("updated", product_id))
        return uow.commit()


def _process(item: dict, now: dt.datetime) -> str:
    url = item["data"]["image"]["url"]
    if _already_known(item):
        return "unchanged" if _finish(item, now) is None else "changed"
    meta, error = None, None
    try:
        meta = fetch(url, now)
    except Exception as failure:  # noqa: BLE001 - whatever goes wrong is recorded, never fatal to the product
        error = {"url": url, "message": error_text(str(failure)), "at": iso(now)}
        log.info("image %s of %s not downloaded: %s", url, product_images.product_of(item), failure)
    account, product_id = product_images.product_of(item)

    def attempt() -> str | outcomes.Stale:
        nonlocal item
        data = _filled(item["data"], meta) if meta else None
        finished = _finish(item, now, data, meta, error)
        if isinstance(finished, outcomes.TooLarge):
            log.warning("image of %s: the product item cannot hold the result; marked FAILED", (account, product_id))
            finished = product_images.failed_bare(item)
            if finished is None:
                return "failed"
        elif finished is None:
            return "failed" if error else "downloaded"
        # The product changed while we downloaded: keep the result only if it still shows the same image.
        item = product_images.get(account, product_id)
        if item is None or (item["data"].get("image") or {}).get("url") != url:
            return "changed"
        return outcomes.Stale()  # the same image still: record the result on the product as it is now

    return contention.retried(attempt, minimum=FINISH_ATTEMPTS, seconds=0, exhausted="changed")


def _download(item: dict, moment: dt.datetime) -> str:
    claimed = product_images.claim(item, moment + LEASE)
    if isinstance(claimed, outcomes.Stale):
        return "claimed_elsewhere"
    if isinstance(claimed, outcomes.TooLarge):
        log.warning(
            "image of %s: the product item is too large to mark; marked FAILED", product_images.product_of(item)
        )
        return "failed" if product_images.failed_bare(item) is None else "changed"
    if "image" not in claimed["data"]:
        _finish(claimed, moment)
        return "unchanged"
    return _process(claimed, moment)


def due_images(limit: int) -> list[dict]:
    """Images queued before now, earliest first (at most `limit` from each queue shard)."""
    return product_images.due(clock.now(), limit)


def download(item: dict) -> str:
    """Download one queued image and record what became of it: "downloaded", "failed", "unchanged",
    "changed" (the product changed meanwhile) or "claimed_elsewhere". Never raises for one product's trouble:
    it is logged (its lease brings it back) and counted "crashed"."""
    try:
        return _download(item, clock.now())
    except Exception:  # noqa: BLE001 - one product's trouble never stops the others
        log.exception("image of %s could not be processed", product_images.product_of(item))
        return "crashed"
