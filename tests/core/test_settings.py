"""Settings: defaults, TOML file, environment, and clear errors naming file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from core import defaults
from core.exceptions import ConfigError
from core.settings import Settings, load_settings


def test_defaults_come_from_the_defaults_module() -> None:
    s = load_settings(environ={})
    assert s.database.url == defaults.DB_URL
    assert s.cluster.threshold == defaults.CLUSTER_THRESHOLD
    assert s.extract.languages == defaults.EXTRACT_LANGUAGES


def test_file_then_environment_override(tmp_path: Path) -> None:
    cfg = tmp_path / "w.toml"
    cfg.write_text('[cluster]\nthreshold = 0.5\n[database]\nurl = "sqlite:///a.db"\n')
    s = load_settings(cfg, environ={})
    assert s.cluster.threshold == 0.5 and s.database.url == "sqlite:///a.db"
    env = {
        "WEBOMETRICS_DB_URL": "sqlite:///b.db",
        "WEBOMETRICS_CLUSTER__R0": "8",
        "WEBOMETRICS_EXTRACT__LANGUAGES": "en, de",
    }
    s = load_settings(cfg, environ=env)
    assert s.database.url == "sqlite:///b.db" and s.cluster.r0 == 8
    assert s.extract.languages == ("en", "de")
    assert load_settings(environ={"WEBOMETRICS_CONFIG": str(cfg)}).cluster.threshold == 0.5


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "[cluster]\nthreshold = 0.5\nthreshhold = 1\n",
            r"w\.toml:3: cluster\.threshhold: unknown key",
        ),
        ("[clustr]\nthreshold = 0.5\n", r"w\.toml:1: clustr: unknown key"),
        (
            "[cluster]\n\nthreshold = 1.5\n",
            r"w\.toml:3: cluster\.threshold: Input should be less than 1",
        ),
        ("[cluster]\nthreshold = 'high'\n", r"w\.toml:2: cluster\.threshold"),
        ("[cluster\nthreshold = 0.5\n", r"w\.toml: invalid TOML: .*line 1"),
        ("[extract]\nlanguages = ['english']\n", r"extract\.languages.*ISO 639"),
        (
            "[cluster]\nsimilarity = 'cosine'\n",
            r"cluster\.similarity.*'jaccard', 'signature' or 'weighted'",
        ),
    ],
)
def test_bad_files_name_file_line_and_field(tmp_path: Path, text: str, expected: str) -> None:
    cfg = tmp_path / "w.toml"
    cfg.write_text(text)
    with pytest.raises(ConfigError, match=expected) as info:
        load_settings(cfg, environ={})
    assert info.value.exit_code == 2


def test_missing_and_non_utf8_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_settings(tmp_path / "nope.toml", environ={})
    bad = tmp_path / "latin.toml"
    bad.write_bytes("[crawl]\ncontact_url = 'caf\xe9'\n".encode("latin-1"))
    with pytest.raises(ConfigError, match="UTF-8"):
        load_settings(bad, environ={})


def test_bad_environment_value_is_reported() -> None:
    with pytest.raises(ConfigError, match=r"environment: cluster\.r0"):
        load_settings(environ={"WEBOMETRICS_CLUSTER__R0": "many"})


def test_settings_are_immutable_and_replace_validates() -> None:
    s = Settings()
    with pytest.raises(Exception, match="frozen"):
        s.cluster.threshold = 0.9  # type: ignore[misc]
    assert s.replace(cluster={"threshold": 0.4}).cluster.threshold == 0.4
    with pytest.raises(Exception, match="less than 1"):
        s.replace(cluster={"threshold": 4})


def test_the_example_file_shows_every_section_with_its_defaults() -> None:
    """``examples/webometrics.toml`` (the README points to it) has a table for every
    section of the settings, and every value it shows is the default."""
    import tomllib

    example = Path(__file__).resolve().parents[2] / "examples" / "webometrics.toml"
    tables = tomllib.loads(example.read_text(encoding="utf-8"))
    assert set(tables) == set(Settings.model_fields)
    loaded = load_settings(example, environ={})
    for section, values in tables.items():
        for key in values:
            shown = getattr(getattr(loaded, section), key)
            default = getattr(getattr(Settings(), section), key)
            assert shown == default, f"[{section}] {key} = {shown!r}, the default is {default!r}"
