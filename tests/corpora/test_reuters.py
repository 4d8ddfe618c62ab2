"""The Reuters-21578 loader: every story, in file order, with its text and first topic."""

from __future__ import annotations

from collections import Counter

import pytest

from corpora.reuters import N_DOCUMENTS, iter_reuters, load_reuters


@pytest.fixture(scope="module")
def corpus(shared_data):
    return load_reuters(path=shared_data / "reuters21578")


def test_all_stories_in_file_order(corpus):
    assert len(corpus) == N_DOCUMENTS == 21578
    assert [d.newid for d in corpus] == list(range(1, 21579))


def test_topics_and_classes(corpus):
    labelled = [d for d in corpus if d.label is not None]
    # README: 13,476 stories are marked TOPICS="YES", some of them with no topic code
    assert len(labelled) == 11367
    assert all(d.label == d.topics[0] for d in labelled)
    top = Counter(d.label for d in labelled).most_common(3)
    assert [name for name, _ in top] == ["earn", "acq", "money-fx"]
    assert corpus[0].title == "BAHIA COCOA REVIEW"
    assert corpus[0].topics == ("cocoa",)
    assert corpus[0].body.startswith("Showers continued throughout the week")
    assert {d.lewis_split for d in corpus} == {"TRAIN", "TEST", "NOT-USED"}


def test_text_is_clean_title_and_body(corpus):
    for d in corpus:
        assert "</" not in d.text and "<BODY" not in d.text and "<DATELINE" not in d.text
        assert "&lt;" not in d.text and "&#" not in d.text
        assert "\x03" not in d.text and "\x02" not in d.text
    unproc = [d for d in corpus if not d.title]
    # TYPE="UNPROC": the whole text; one of them (NEWID 12793) is truly empty
    assert [d.newid for d in unproc if not d.body] == [12793]
    briefs = [d for d in corpus if d.title and not d.body]
    assert len(briefs) > 1000  # TYPE="BRIEF": a title only
    assert all(d.text == d.title for d in briefs)
    assert "<" in " ".join(d.body for d in corpus[:200])  # '&lt;' decoded (company codes)


def test_limit_and_errors(shared_data, tmp_path):
    first = load_reuters(limit=5, path=shared_data / "reuters21578")
    assert [d.newid for d in first] == [1, 2, 3, 4, 5]
    assert load_reuters(limit=0, path=shared_data / "reuters21578") == []
    with pytest.raises(ValueError, match="limit must be >= 0"):
        load_reuters(limit=-1)
    with pytest.raises(FileNotFoundError, match="no reut2-"):
        next(iter_reuters(tmp_path))
