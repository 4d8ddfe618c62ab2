"""``bench/activity.py --update``: the new rows replace the saved ones, the rest stays."""

from __future__ import annotations

from bench.activity import updated_report


def _row(corpus: str, method: str, f: float) -> dict[str, object]:
    return {"corpus": corpus, "method": method, "f_class": f}


def test_update_replaces_its_rows_adds_new_corpora_and_keeps_the_rest() -> None:
    saved = {
        "date": "2026-11-29 03:26",
        "corpora": [{"name": "bbc", "documents": 2225, "note": "n"}],
        "rows": [_row("bbc", "activity", 0.70), _row("bbc", "anchor", 0.72)],
        "seed_rows": [{"corpus": "bbc", "method": "activity", "f_class_by_seed": [0.7]}],
        "notes": ["an older note"],
    }
    new = {
        "date": "2026-11-29 05:48",
        "load_before": [0.5, 1.0, 1.8],
        "corpora": [
            {"name": "bbc", "documents": 2225, "note": "n"},
            {"name": "pooled-en", "documents": 7450, "note": "p"},
        ],
        "rows": [_row("bbc", "activity", 0.71), _row("pooled-en", "activity", 0.59)],
        "seed_rows": [{"corpus": "pooled-en", "method": "activity", "f_class_by_seed": [0.6]}],
    }
    out = updated_report(saved, new)
    assert [c["name"] for c in out["corpora"]] == ["bbc", "pooled-en"]
    assert out["rows"] == [
        _row("bbc", "activity", 0.71),  # replaced in place
        _row("bbc", "anchor", 0.72),  # not measured again: kept
        _row("pooled-en", "activity", 0.59),  # new: appended
    ]
    assert [r["corpus"] for r in out["seed_rows"]] == ["bbc", "pooled-en"]
    assert out["date"] == saved["date"]
    assert out["notes"][0] == "an older note"
    assert "bbc, pooled-en" in out["notes"][1] and "2026-11-29 05:48" in out["notes"][1]
