"""Where a product image's download stands (decisions §10). Pure and free of pydantic: the stream trigger reads
it on every record."""

from enum import StrEnum


class ImageStatus(StrEnum):
    PENDING = "PENDING"
    DOWNLOADING = "DOWNLOADING"
    DONE = "DONE"
    FAILED = "FAILED"
