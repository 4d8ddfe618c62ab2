"""The servers the test suite starts itself answer on 127.0.0.1."""

from __future__ import annotations

import redis
from sqlalchemy import text

from store import make_engine


def test_private_postgresql_server(postgres_url: str) -> None:
    engine = make_engine(postgres_url)
    with engine.connect() as conn:
        version = conn.execute(text("SHOW server_version")).scalar()
        listen = conn.execute(text("SHOW listen_addresses")).scalar()
    assert version and int(version.split(".")[0]) >= 13
    assert listen == "127.0.0.1"
    engine.dispose()


def test_private_redis_server(redis_server) -> None:
    client = redis.Redis.from_url(redis_server.url)
    client.set("webometrics-test", "ok")
    assert client.get("webometrics-test") == b"ok"
    assert client.config_get("bind")["bind"] == "127.0.0.1"
    client.close()
