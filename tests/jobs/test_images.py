"""Downloading product images from a real HTTP server on loopback (pytest-httpserver)."""

import datetime as dt
import hashlib
import threading

import pytest
from werkzeug import Response

from chalicelib.adapters import outbound
from chalicelib.jobs import images as job
from chalicelib.service import clock, images
from chalicelib.store import keys, table
from chalicelib.store.events import iso

# Product writes queue their image at the real time; the job runs "later" than any write of a test.
LATER = dt.datetime.now(dt.timezone.utc).replace(microsecond=0) + dt.timedelta(hours=1)
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 100


pytestmark = pytest.mark.usefixtures("fake_clock")


def download_at(moment: dt.datetime, **options) -> dict:
    """One run of the image job with the clock at `moment`."""
    clock.current().set(moment)
    return job.run(**options)


@pytest.fixture(autouse=True)
def private_hosts_allowed(monkeypatch):
    """The receiver runs on loopback, which the job refuses unless the deployment allows it (tests do)."""
    monkeypatch.setenv("ALLOW_PRIVATE_IMAGE_HOSTS", "true")


def create(api, image, product_id="cola"):
    body = {"id": product_id, "status": "ACTIVE", "category": "drinks", "name": "Cola", "image": image}
    response = api.post("/products", body)
    assert response.status_code == 200, response.data
    return response


def item(product_id="cola"):
    response = table.client().get_item(
        TableName=table.name(), Key=table.to_item(keys.product_key("acme", product_id)), ConsistentRead=True
    )
    return table.from_item(response["Item"])


def serve_png(httpserver, path="/cola.png", headers=None):
    httpserver.expect_request(path).respond_with_data(PNG, content_type="image/png", headers=headers or {})
    return httpserver.url_for(path)


def test_a_downloaded_image_fills_etag_and_last_modified_from_the_response(catalogue, httpserver):
    url = serve_png(httpserver, headers={"ETag": '"v1"', "Last-Modified": "Wed, 21 Oct 2015 07:28:00 GMT"})
    written = create(catalogue, {"url": url})
    assert written.data["image"] == {"url": url}

    assert download_at(LATER)["downloaded"] == 1

    read = catalogue.get("/products/cola")
    assert read.data["image"] == {"url": url, "etag": '"v1"', "last_modified": "2015-10-21T07:28:00.000Z"}
    assert read.headers["ETag"] != written.headers["ETag"]  # the product changed
    stored = item()
    assert stored["image_status"] == "DONE" and "GSI3PK" not in stored
    assert stored["image_meta"]["size"] == len(PNG)
    assert stored["image_meta"]["sha256"] == hashlib.sha256(PNG).hexdigest()
    assert stored["image_meta"]["content_type"] == "image/png"


def test_a_download_that_fills_the_image_is_a_product_updated_in_the_feed_at_its_time(catalogue, httpserver):
    create(catalogue, {"url": serve_png(httpserver, headers={"ETag": '"v1"'})})
    before = catalogue.get("/changes?after=latest").data["max_sequence"]

    download_at(LATER)

    (entry,) = catalogue.get(f"/changes?after={before}").data["changes"]
    assert {name: value for name, value in entry.items() if name != "unit"} == {
        "sequence": before + 1,
        "type": "product.updated",
        "resource": "product",
        "id": "cola",
        "at": iso(LATER),
    }
    assert len(entry["unit"]) == 16  # the download's own unit of work: no request names it


def test_a_download_that_fills_nothing_appends_no_feed_entry(catalogue, httpserver):
    url = serve_png(httpserver)
    create(catalogue, {"url": url, "etag": "mine", "last_modified": "2015-10-21T07:28:00.000Z"})
    before = catalogue.get("/changes?after=latest").data["max_sequence"]

    assert download_at(LATER)["downloaded"] == 1

    assert catalogue.get(f"/changes?after={before}").data["changes"] == []


def test_without_cache_headers_the_etag_is_the_sha256_and_last_modified_the_download_time(catalogue, httpserver):
    url = serve_png(httpserver)
    create(catalogue, {"url": url})
    download_at(LATER)
    image = catalogue.get("/products/cola").data["image"]
    assert image == {"url": url, "etag": hashlib.sha256(PNG).hexdigest(), "last_modified": iso(LATER)}


def test_a_given_etag_is_kept_and_only_last_modified_is_filled(catalogue, httpserver):
    url = serve_png(httpserver, headers={"ETag": '"server"', "Last-Modified": "Wed, 21 Oct 2015 07:28:00 GMT"})
    create(catalogue, {"url": url, "etag": "mine"})
    download_at(LATER)
    assert catalogue.get("/products/cola").data["image"] == {
        "url": url,
        "etag": "mine",
        "last_modified": "2015-10-21T07:28:00.000Z",
    }


def test_an_image_already_downloaded_is_not_fetched_again_when_the_product_changes(catalogue, httpserver):
    url = serve_png(httpserver, headers={"ETag": '"v1"'})
    create(catalogue, {"url": url})
    download_at(LATER)
    assert catalogue.patch("/products/cola", {"price": 150}).status_code == 200

    summary = download_at(LATER + dt.timedelta(minutes=1))

    assert summary["unchanged"] == 1
    assert len(httpserver.log) == 1
    assert catalogue.get("/products/cola").data["image"]["etag"] == '"v1"'


def test_a_new_url_is_downloaded_again(catalogue, httpserver):
    create(catalogue, {"url": serve_png(httpserver, "/a.png", {"ETag": '"a"'})})
    download_at(LATER)
    new_url = serve_png(httpserver, "/b.png", {"ETag": '"b"'})
    catalogue.patch("/products/cola", {"image": {"url": new_url}})
    download_at(LATER + dt.timedelta(minutes=1))
    assert catalogue.get("/products/cola").data["image"]["etag"] == '"b"'


def assert_failed(catalogue, message, before):
    """The failure is recorded on the item; the product reads as written, without internal fields."""
    stored = item()
    assert stored["image_status"] == "FAILED" and "GSI3PK" not in stored
    assert message in stored["image_error"]["message"]
    read = catalogue.get("/products/cola")
    assert read.status_code == 200
    assert read.data == before


def test_an_image_over_10_mib_is_refused(catalogue, httpserver):
    httpserver.expect_request("/big.png").respond_with_data(b"\x00" * (10 * 1024 * 1024 + 1), content_type="image/png")
    before = create(catalogue, {"url": httpserver.url_for("/big.png")}).data
    assert download_at(LATER)["failed"] == 1
    assert_failed(catalogue, "more than 10485760 bytes", before)


def test_an_image_streamed_past_10_mib_without_a_length_is_cut_off(catalogue, httpserver):
    def endless(_request):
        chunk = b"\x00" * (1024 * 1024)
        return Response((chunk for _ in range(12)), content_type="image/png")

    httpserver.expect_request("/stream.png").respond_with_handler(endless)
    before = create(catalogue, {"url": httpserver.url_for("/stream.png")}).data
    download_at(LATER)
    assert_failed(catalogue, "more than 10485760 bytes", before)


def test_an_image_of_exactly_10_mib_is_accepted(catalogue, httpserver):
    httpserver.expect_request("/max.png").respond_with_data(b"\x00" * (10 * 1024 * 1024), content_type="image/png")
    create(catalogue, {"url": httpserver.url_for("/max.png")})
    assert download_at(LATER)["downloaded"] == 1
    assert item()["image_meta"]["size"] == 10 * 1024 * 1024


def test_a_response_that_is_not_an_image_is_refused(catalogue, httpserver):
    httpserver.expect_request("/page").respond_with_data("<html></html>", content_type="text/html")
    before = create(catalogue, {"url": httpserver.url_for("/page")}).data
    download_at(LATER)
    assert_failed(catalogue, "Content-Type text/html is not an image/* type", before)


def test_an_error_status_is_recorded(catalogue, httpserver):
    httpserver.expect_request("/gone.png").respond_with_data("", status=404)
    before = create(catalogue, {"url": httpserver.url_for("/gone.png")}).data
    download_at(LATER)
    assert_failed(catalogue, "the server answered 404", before)


def test_a_loopback_address_is_refused_unless_allowed(catalogue, httpserver, monkeypatch):
    monkeypatch.setenv("ALLOW_PRIVATE_IMAGE_HOSTS", "false")
    url = serve_png(httpserver).replace("localhost", "127.0.0.1")
    before = create(catalogue, {"url": url}).data
    download_at(LATER)
    assert httpserver.log == []  # refused before connecting
    assert_failed(catalogue, "127.0.0.1, a private, loopback, link-local or reserved address", before)


@pytest.mark.parametrize(
    "address, public",
    [
        ("93.184.216.34", True),
        ("2606:2800:220:1:248:1893:25c8:1946", True),
        ("127.0.0.1", False),
        ("10.1.2.3", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("169.254.169.254", False),
        ("100.64.0.1", False),
        ("0.0.0.0", False),
        ("224.0.0.1", False),
        ("240.0.0.1", False),
        ("::1", False),
        ("fe80::1", False),
        ("fd00::1", False),
        ("::ffff:127.0.0.1", False),
        ("ff02::1", False),
    ],
)
def test_only_public_addresses_count_as_public(address, public):
    assert outbound.is_public(address) is public


def test_up_to_three_redirects_are_followed(catalogue, httpserver):
    for hop in range(3):
        httpserver.expect_request(f"/r{hop}").respond_with_data("", status=302, headers={"Location": f"/r{hop + 1}"})
    serve_png(httpserver, "/r3", {"ETag": '"end"'})
    create(catalogue, {"url": httpserver.url_for("/r0")})
    assert download_at(LATER)["downloaded"] == 1
    assert catalogue.get("/products/cola").data["image"]["etag"] == '"end"'


def test_a_fourth_redirect_is_refused(catalogue, httpserver):
    for hop in range(4):
        httpserver.expect_request(f"/r{hop}").respond_with_data("", status=301, headers={"Location": f"/r{hop + 1}"})
    serve_png(httpserver, "/r4")
    before = create(catalogue, {"url": httpserver.url_for("/r0")}).data
    download_at(LATER)
    assert_failed(catalogue, "more than 3 redirects", before)


def test_a_redirect_to_a_private_address_is_refused(catalogue, httpserver, monkeypatch):
    """Each hop is checked again: the first one is let through here, the redirect's target is not."""
    checked = []
    real_resolve = outbound.resolve

    def resolve(host, port, allow_private):
        checked.append(host)
        return real_resolve(host, port, allow_private or len(checked) == 1)

    monkeypatch.setattr(outbound, "resolve", resolve)
    monkeypatch.setenv("ALLOW_PRIVATE_IMAGE_HOSTS", "false")
    target = serve_png(httpserver, "/inside.png").replace("localhost", "127.0.0.1")
    httpserver.expect_request("/out").respond_with_data("", status=302, headers={"Location": target})
    before = create(catalogue, {"url": httpserver.url_for("/out")}).data
    download_at(LATER)
    assert len(checked) == 2
    assert_failed(catalogue, "127.0.0.1, a private", before)


def test_a_change_to_the_product_during_the_download_is_not_overwritten(catalogue, httpserver):
    changed = threading.Event()

    def change_then_answer(_request):
        # The product gets another image while the first one downloads.
        catalogue.patch("/products/cola", {"image": {"url": httpserver.url_for("/second.png")}, "price": 99})
        changed.set()
        return Response(PNG, content_type="image/png", headers={"ETag": '"first"'})

    httpserver.expect_request("/first.png").respond_with_handler(change_then_answer)
    serve_png(httpserver, "/second.png", {"ETag": '"second"'})
    create(catalogue, {"url": httpserver.url_for("/first.png")})

    assert download_at(LATER)["changed"] == 1
    assert changed.is_set()
    read = catalogue.get("/products/cola").data
    assert read["price"] == 99 and read["image"] == {"url": httpserver.url_for("/second.png")}
    assert download_at(LATER + dt.timedelta(minutes=1))["downloaded"] == 1
    assert catalogue.get("/products/cola").data["image"]["etag"] == '"second"'


def test_the_same_image_rewritten_during_the_download_gets_the_result(catalogue, httpserver):
    def change_then_answer(_request):
        catalogue.patch("/products/cola", {"price": 99})
        return Response(PNG, content_type="image/png", headers={"ETag": '"v1"'})

    httpserver.expect_request("/cola.png").respond_with_handler(change_then_answer)
    create(catalogue, {"url": httpserver.url_for("/cola.png")})
    assert download_at(LATER)["downloaded"] == 1
    read = catalogue.get("/products/cola").data
    assert read["price"] == 99 and read["image"]["etag"] == '"v1"'
    assert "GSI3PK" not in item()


def test_the_product_write_queues_its_image_and_removing_the_image_unqueues_it(catalogue, httpserver):
    create(catalogue, {"url": serve_png(httpserver)})
    queued = item()
    assert queued["image_status"] == "PENDING" and queued["GSI3PK"] == keys.queue_partition(keys.IMAGES_PENDING, "acme")
    assert catalogue.patch("/products/cola", {"image": None}).status_code == 200
    assert "GSI3PK" not in item() and "image_status" not in item()
    assert download_at(LATER)["due"] == 0
    assert httpserver.log == []


def test_a_download_claimed_by_a_job_that_died_is_done_by_the_next(catalogue, httpserver):
    from chalicelib.store import product_images

    create(catalogue, {"url": serve_png(httpserver)})
    assert (
        product_images.claim(product_images.get("acme", "cola"), LATER + images.LEASE) is not None
    )  # ...and the job dies
    assert download_at(LATER + dt.timedelta(seconds=5))["due"] == 0
    assert download_at(LATER + images.LEASE + dt.timedelta(seconds=1))["downloaded"] == 1


def test_the_table_stream_downloads_a_newly_queued_image_and_ignores_the_jobs_own_writes(catalogue, httpserver):
    from chalice.test import Client

    from app import app
    from chalicelib.service import background

    create(catalogue, {"url": serve_png(httpserver)})
    queued = table.to_item(item())
    downloading = dict(queued, image_status={"S": "DOWNLOADING"})
    assert background.woken("MODIFY", queued) == background.Woken(None, True, False)
    assert background.woken("MODIFY", downloading) == background.Woken(None, False, False)
    record = {
        "eventID": "1",
        "eventName": "INSERT",
        "eventSource": "aws:dynamodb",
        "awsRegion": "us-east-1",
        "eventSourceARN": "arn:aws:dynamodb:us-east-1:000000000000:table/t/stream/x",
        "dynamodb": {
            "ApproximateCreationDateTime": 1700000000,
            "Keys": {k: queued[k] for k in ("PK", "SK")},
            "NewImage": queued,
            "SequenceNumber": "1",
            "SizeBytes": 10,
            "StreamViewType": "NEW_IMAGE",
        },
    }
    with Client(app) as client:
        client.lambda_.invoke("table_stream", {"Records": [record]})
    assert item()["image_status"] == "DONE"
    assert "etag" in catalogue.get("/products/cola").data["image"]


def test_the_local_runner_downloads_queued_images(catalogue, httpserver):
    import time

    from chalicelib.jobs import budget, handlers

    create(catalogue, {"url": serve_png(httpserver)})
    stop = threading.Event()
    runner = threading.Thread(target=budget.loop_forever, args=(handlers.IMAGES, stop, 0.05))
    runner.start()
    try:
        deadline = time.monotonic() + 5
        while item()["image_status"] != "DONE" and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        stop.set()
        runner.join(timeout=5)
    assert not runner.is_alive()
    assert item()["image_status"] == "DONE"


def _pad_to_the_item_limit(product_id: str, slack: int) -> None:
    """Grow the stored product item until DynamoDB takes no more, less `slack` bytes."""
    stored = table.to_item(item(product_id))
    for size in range(409_600, 390_000, -20):
        try:
            table.client().put_item(TableName=table.name(), Item={**stored, "padding": {"S": "p" * size}})
            table.client().put_item(TableName=table.name(), Item={**stored, "padding": {"S": "p" * (size - slack)}})
            return
        except table.client().exceptions.ClientError:
            continue
    raise AssertionError("could not pad the item")


# slack 0: too large even to be claimed; 60: claimed, but too large to hold the error it ended with.
@pytest.mark.parametrize("slack", [0, 60])
def test_a_product_at_the_item_size_limit_with_a_failing_image_ends_failed_and_the_run_goes_on(
    catalogue, httpserver, slack, caplog
):
    httpserver.expect_request("/broken.png").respond_with_data("gone", status=500)
    create(catalogue, {"url": httpserver.url_for("/broken.png")}, product_id="huge")
    _pad_to_the_item_limit("huge", slack)
    create(catalogue, {"url": serve_png(httpserver)})

    summary = download_at(LATER)

    assert item("huge")["image_status"] == "FAILED"
    assert "GSI3PK" not in item("huge")
    assert item()["image_status"] == "DONE"
    assert summary["failed"] == 1 and summary["downloaded"] == 1
    assert download_at(LATER + dt.timedelta(minutes=5))["due"] == 0  # never stuck
    assert ("too large to mark" in caplog.text) == (slack == 0)
    assert ("cannot hold the result" in caplog.text) == (slack == 60)


def test_one_products_trouble_does_not_stop_the_run(catalogue, httpserver, monkeypatch):
    create(catalogue, {"url": serve_png(httpserver, "/a.png")}, product_id="a")
    create(catalogue, {"url": serve_png(httpserver, "/b.png")}, product_id="b")
    real_claim = images.product_images.claim

    def claim(queued, lease_until):
        if queued["product_id"] == "a":
            raise RuntimeError("DynamoDB hiccup")
        return real_claim(queued, lease_until)

    monkeypatch.setattr(images.product_images, "claim", claim)
    summary = download_at(LATER)
    assert item("b")["image_status"] == "DONE" and summary["downloaded"] == 1
    assert item("a")["image_status"] == "PENDING"  # still queued for the next run


def test_images_take_turns_per_account_so_one_accounts_many_images_do_not_hold_up_anothers(catalogue, httpserver):
    from tests.conftest import OTHER_TOKEN

    url = serve_png(httpserver)
    for n in range(job.BATCH + 5):  # more than one run downloads
        create(catalogue, {"url": f"{url}?n={n}"}, product_id=f"p{n:02d}")
    clock.current().advance(1)
    assert catalogue.put("/categories/drinks", {"name": "Drinks"}, token=OTHER_TOKEN).status_code == 200
    body = {"id": "o1", "status": "ACTIVE", "category": "drinks", "name": "Tonic", "image": {"url": url}}
    assert catalogue.post("/products", body, token=OTHER_TOKEN).status_code == 200

    summary = download_at(LATER)

    assert summary["downloaded"] == job.BATCH
    assert "etag" in catalogue.get("/products/o1", token=OTHER_TOKEN).data["image"]  # in the first run, second turn
    statuses = [item(f"p{n:02d}")["image_status"] for n in range(job.BATCH + 5)]
    assert statuses == ["DONE"] * (job.BATCH - 1) + ["PENDING"] * 6
