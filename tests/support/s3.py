"""S3 for the tests of URLs: moto's server on 127.0.0.1, reached through s3fs."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

import pytest


@contextlib.contextmanager
def moto_s3(bucket: str = "logs") -> Iterator[dict[str, Any]]:
    """A moto S3 server on 127.0.0.1 with one bucket; yields fsspec's storage_options for it.
    Skips the test where s3fs or moto is missing."""
    pytest.importorskip("s3fs")
    server_module = pytest.importorskip("moto.server")
    boto3 = pytest.importorskip("boto3")
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = server_module.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        credentials = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
        client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", **credentials)
        client.create_bucket(Bucket=bucket)
        yield {
            "endpoint_url": endpoint,
            "key": "testing",
            "secret": "testing",
            "client_kwargs": {"region_name": "us-east-1"},
        }
    finally:
        server.stop()
