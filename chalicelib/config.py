"""Settings come from the environment only (decisions §1); read lazily so tests can change them."""

import hashlib
import hmac
import os

DEFAULT_TABLE_NAME = "supplier-ordering"
_DEV_SECRET = "dev-signing-secret-change-me"


_models = None  # botocore's loader of service models, shared by every client this process makes


def aws_client(service: str):
    """A client of `service` (the table's, the feed queue's) in the region, with standard retries, 4 attempts and TCP
    keep-alive, its endpoint from the environment as boto3 takes it. The service models (API, endpoint rules) are
    read from disk once per process: a new session would parse them again, and tests make clients per test."""
    global _models
    import botocore.loaders
    import botocore.session
    from botocore.config import Config

    if _models is None:
        _models = botocore.loaders.create_loader()
    session = botocore.session.get_session()  # what boto3.client() makes, with the models shared
    session.register_component("data_loader", _models)
    region = os.environ.get("AWS_DEFAULT_REGION") or os.environ.get("AWS_REGION") or "us-east-1"
    return session.create_client(
        service, region_name=region, config=Config(retries={"mode": "standard", "max_attempts": 4}, tcp_keepalive=True)
    )


def table_name() -> str:
    return os.environ.get("TABLE_NAME", DEFAULT_TABLE_NAME)


def default_timezone() -> str:
    return os.environ.get("TIMEZONE") or "UTC"


def standing_order_workers(default: int) -> int:
    """Turns of the standing-order job at once (STANDING_ORDER_WORKERS, 1 to 64; `default` when unset)."""
    configured = os.environ.get("STANDING_ORDER_WORKERS", "")
    return max(1, min(64, int(configured))) if configured.isdigit() else default


def derived_secret(purpose: str) -> bytes:
    """A secret per purpose (cursor, webhook, ...) derived from SIGNING_SECRET, so one leak does not expose all."""
    root = os.environ.get("SIGNING_SECRET") or _DEV_SECRET
    return hmac.new(root.encode(), purpose.encode(), hashlib.sha256).digest()


def allow_private_image_hosts() -> bool:
    return os.environ.get("ALLOW_PRIVATE_IMAGE_HOSTS", "").lower() in ("1", "true", "yes")


def allow_private_webhook_hosts() -> bool:
    """Webhook targets in private ranges: refused unless allowed (`make run` and the tests allow them)."""
    return os.environ.get("ALLOW_PRIVATE_WEBHOOK_HOSTS", "").lower() in ("1", "true", "yes")


# Chalice needs the stream ARN when the app is packaged; the deploy step sets it, the placeholder keeps
# imports and local runs working.
TABLE_STREAM_PLACEHOLDER = "arn:aws:dynamodb:us-east-1:000000000000:table/supplier-ordering/stream/placeholder"


def table_stream_arn() -> str:
    return os.environ.get("TABLE_STREAM_ARN") or TABLE_STREAM_PLACEHOLDER


FEED_QUEUE_PLACEHOLDER = "arn:aws:sqs:us-east-1:000000000000:supplier-ordering-feed.fifo"


def feed_queue_arn() -> str:
    return os.environ.get("FEED_QUEUE_ARN") or FEED_QUEUE_PLACEHOLDER


def cors_allow_origins() -> tuple[str, ...]:
    """Origins whose browsers may call the API (CORS_ALLOW_ORIGINS: comma-separated, or `*`); none by default."""
    raw = os.environ.get("CORS_ALLOW_ORIGINS", "")
    return tuple(origin.strip().rstrip("/") for origin in raw.split(",") if origin.strip())
