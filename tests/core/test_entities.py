"""Sites as web entities (core.entities): the default on real platform hosts, the shipped
platform rules against the PSL snapshot, analysts' split and merge rules, validation."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from core.domains import registered_domain
from core.entities import (
    DEFAULT_RULES_FILE,
    SiteRules,
    normalise_merge,
    normalise_prefix,
    private_extractor,
    site_of,
)
from core.exceptions import ConfigError, ParameterError

# real hosts and URLs of hosting platforms -> the site each is under the default rules
DEFAULT_SITES = [
    # the PSL's private section
    ("http://someone.blogspot.com/2009/05/post.html", "someone.blogspot.com"),
    ("https://name.github.io/project/", "name.github.io"),
    ("https://my-app.appspot.com/", "my-app.appspot.com"),
    ("https://lab.wixsite.com/site", "lab.wixsite.com"),
    ("http://school1.spb.ru/", "school1.spb.ru"),
    ("http://pdmi.ras.ru/~olegm/", "pdmi.ras.ru"),
    ("http://www.ras.ru/", "ras.ru"),  # www below a private suffix: the suffix's own site
    ("http://blogspot.com/", "blogspot.com"),
    # the shipped subdomain platforms
    ("http://user.livejournal.com/12345.html", "user.livejournal.com"),
    ("http://www.user.livejournal.com/", "user.livejournal.com"),
    ("http://www.livejournal.com/", "livejournal.com"),
    ("http://m.livejournal.com/read", "livejournal.com"),
    ("http://physics-school.narod.ru/", "physics-school.narod.ru"),
    ("http://kafedra.ucoz.ru/news", "kafedra.ucoz.ru"),
    ("http://kafedra.ucoz.net/", "kafedra.ucoz.net"),
    ("http://club.at.ua/", "club.at.ua"),
    ("https://someone.wordpress.com/2020/01/01/x/", "someone.wordpress.com"),
    ("https://someone.tumblr.com/", "someone.tumblr.com"),
    ("http://someone.blogspot.ru/", "someone.blogspot.ru"),
    # the shipped path rules
    ("https://sites.google.com/site/LabPage/home", "sites.google.com/site/labpage"),
    ("https://sites.google.com/view/conf2020", "sites.google.com/view/conf2020"),
    ("https://sites.google.com/", "google.com"),  # no site in the path: Google's own
    ("http://www.geocities.com/Athens/Acropolis/1234/index.html",
     "geocities.com/athens/acropolis/1234"),
    ("http://www.geocities.com/SiliconValley/7116/", "geocities.com/siliconvalley/7116"),
    ("http://www.geocities.com/jsmith/", "geocities.com/jsmith"),
    ("http://members.aol.com/htmlguru/index.html", "members.aol.com/htmlguru"),
    ("http://ourworld.compuserve.com/homepages/kirky/", "ourworld.compuserve.com/homepages/kirky"),
    ("http://www.best.com/~thvv/multics.html", "best.com/~thvv"),
    ("http://www.best.com/", "best.com"),
    ("http://world.std.com/~hti/", "world.std.com/~hti"),
    ("http://www.liveinternet.ru/users/someone/post1/", "liveinternet.ru/users/someone"),
    # ordinary sites stay their registered domain
    ("http://www.cs.ox.ac.uk/people/", "ox.ac.uk"),
    ("https://lenta.ru/news/2020/", "lenta.ru"),
    ("https://vk.com/spbu", "vk.com"),
    ("http://132.236.125.30/x", "132.236.125.30"),
    ("http://localhost/", "localhost"),
]  # fmt: skip


@pytest.mark.parametrize(("url", "site"), DEFAULT_SITES)
def test_default_site_of_real_platform_hosts(url: str, site: str) -> None:
    assert site_of(url) == site


def test_registered_domain_keeps_its_meaning() -> None:
    """eTLD+1 without the private section: what universities' domains are checked by."""
    assert registered_domain("user.livejournal.com") == "livejournal.com"
    assert registered_domain("someone.blogspot.com") == "blogspot.com"
    assert registered_domain("sites.google.com") == "google.com"


def test_the_shipped_platforms_are_not_in_the_psl_private_section() -> None:
    """The file lists only what the PSL misses: a platform the PSL's private section
    gains is to be dropped from the file (it would be a second rule for the same thing)."""
    data = tomllib.loads(DEFAULT_RULES_FILE.read_text(encoding="utf-8"))
    platforms = data["subdomain"]["platforms"]
    assert len(platforms) == len(set(platforms)) > 30
    extract = private_extractor()
    in_psl = [p for p in platforms if extract(f"someone.{p}").is_private]
    assert in_psl == []
    for rule in data["path"]:
        for host in rule["hosts"]:
            assert not extract(host).is_private, host


def test_each_entity_says_which_rule_decided() -> None:
    rules = SiteRules.default()
    assert rules.entity("http://a.livejournal.com/").rule == "platform subdomain livejournal.com"
    assert rules.entity("https://sites.google.com/site/x").rule == "platform path sites.google.com"
    assert rules.entity("https://x.blogspot.com/").rule == "public suffix list"
    assert rules.entity("http://10.0.0.1/").rule == "host"


def test_split_of_a_host_and_of_a_url_prefix() -> None:
    rules = SiteRules.default().with_analyst(
        splits=["https://www.vk.com/spbu/", "vk.com/spbu/photos", "www.cs.cornell.edu"]
    )
    assert rules.splits == {"vk.com/spbu", "vk.com/spbu/photos", "cs.cornell.edu"}
    # a URL prefix: the host and its www. form, at a path-segment boundary
    assert rules.key("https://vk.com/spbu") == "vk.com/spbu"
    assert rules.key("https://www.vk.com/SPbU/wall?x=1") == "vk.com/spbu"
    assert rules.key("https://vk.com/spbunews") == "vk.com"
    assert rules.key("https://m.vk.com/spbu") == "vk.com"
    # the longest matching prefix wins
    assert rules.key("https://vk.com/spbu/photos/1") == "vk.com/spbu/photos"
    # a host: with its subdomains; a split wins over every platform and PSL rule
    assert rules.key("http://www.cs.cornell.edu/Info/") == "cs.cornell.edu"
    assert rules.key("http://a.b.cs.cornell.edu/") == "cs.cornell.edu"
    assert rules.key("http://www.cornell.edu/") == "cornell.edu"
    assert rules.entity("http://cs.cornell.edu/").rule == "split cs.cornell.edu"
    inside = SiteRules.default().with_analyst(splits=["a.livejournal.com/tag"])
    assert inside.key("http://a.livejournal.com/tag/x") == "a.livejournal.com/tag"
    assert inside.key("http://a.livejournal.com/1.html") == "a.livejournal.com"


def test_merge_names_the_entity_by_its_first_site() -> None:
    rules = SiteRules.default().with_analyst(
        merges=[("msu.ru", "msu.su"), ("a.livejournal.com", "b.livejournal.com")],
        splits=["vk.com/msu"],
    )
    assert rules.key("http://www.msu.su/x") == "msu.ru"
    assert rules.key("http://cs.msu.ru/") == "msu.ru"
    assert rules.entity("http://msu.ru/").rule == "merge msu.ru"
    assert rules.key("http://b.livejournal.com/") == "a.livejournal.com"
    assert rules.key("http://c.livejournal.com/") == "c.livejournal.com"
    # a merge applies to the site a split made
    merged_split = rules.with_analyst(splits=["vk.com/msu"], merges=[("msu.ru", "vk.com/msu")])
    assert merged_split.key("https://vk.com/msu/photos") == "msu.ru"
    assert rules.fingerprint() != merged_split.fingerprint()
    assert (
        rules.fingerprint()
        == SiteRules.default()
        .with_analyst(
            merges=[("msu.ru", "msu.su"), ("a.livejournal.com", "b.livejournal.com")],
            splits=["vk.com/msu"],
        )
        .fingerprint()
    )


@pytest.mark.parametrize(
    ("prefix", "message"),
    [
        ("", "not a host name"),
        ("not a host", "without query"),
        ("vk.com/spbu?x=1", "without query"),
        ("http://under_score..ru/", "not a host name"),
        ("intranet", "not a host name"),
        ("vk.com/" + "a" * 300, "at most 253"),
    ],
)
def test_bad_prefixes_are_refused_with_what_to_give(prefix: str, message: str) -> None:
    with pytest.raises(ParameterError, match=message):
        normalise_prefix(prefix)


def test_a_merge_needs_two_sites() -> None:
    assert normalise_merge(["MSU.ru", "www.msu.su", "msu.ru"]) == ("msu.ru", "msu.su")
    with pytest.raises(ParameterError, match="at least two"):
        normalise_merge(["msu.ru", "www.msu.ru"])


def test_a_bad_rules_file_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "rules.toml"
    bad.write_text('[subdomain]\nplatforms = ["not a domain"]\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="bad domains"):
        SiteRules.default(bad)
    bad.write_text('[[path]]\nhosts = ["x.com"]\nsite = "^/("\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="bad expression"):
        SiteRules.default(bad)
    with pytest.raises(ConfigError, match="rules file"):
        SiteRules.default(tmp_path / "missing.toml")
    good = tmp_path / "good.toml"
    good.write_text(
        '[subdomain]\nplatforms = ["example.org"]\n[[path]]\nhosts = ["example.com"]\n'
        "site = '^/u/[^/]+'\n",
        encoding="utf-8",
    )
    rules = SiteRules.default(good)
    assert rules.key("http://x.example.org/") == "x.example.org"
    assert rules.key("http://www.example.com/u/Ann/1") == "example.com/u/ann"
    assert rules.key("http://user.livejournal.com/") == "livejournal.com"
