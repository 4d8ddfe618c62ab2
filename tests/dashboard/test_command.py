"""``webometrics dashboard``: its options, and the errors it reports before starting."""

from __future__ import annotations

import socket
import sqlite3

from webometrics.cli import build_parser, main


def test_options_and_help(capsys) -> None:
    args = build_parser().parse_args(["dashboard", "--host", "127.0.0.1", "--port", "9999"])
    assert (args.host, args.port) == ("127.0.0.1", 9999)
    assert not hasattr(args, "db_url") or args.db_url is None
    # --db-url after the subcommand works like the global option, which it must not erase
    args = build_parser().parse_args(["--db-url", "sqlite:///a.db", "dashboard"])
    assert args.db_url == "sqlite:///a.db"
    args = build_parser().parse_args(["dashboard", "--db-url", "sqlite:///b.db"])
    assert args.db_url == "sqlite:///b.db"


def test_refuses_a_port_in_use(dashboard_db, capsys) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code = main(["dashboard", "--db-url", dashboard_db.url, "--port", str(port)])
    assert code == 2
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{port}" in err and "another --port" in err


def test_refuses_an_old_schema(tmp_path, capsys) -> None:
    path = tmp_path / "empty.db"
    sqlite3.connect(path).close()
    code = main(["dashboard", "--db-url", f"sqlite:///{path}"])
    assert code == 3
    assert "webometrics db upgrade" in capsys.readouterr().err


def test_refuses_a_missing_database(tmp_path, capsys) -> None:
    code = main(["dashboard", "--db-url", f"sqlite:///{tmp_path / 'nope.db'}"])
    assert code == 3
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "nope.db").exists()
