"""The report's words in Russian: every heading, caption, table header, note and
description of ``webometrics report --language ru``, in one table.

The report is built in English (:mod:`.build`, :mod:`.ranks`); :func:`translate_report`
then rewrites its Markdown files (``README.md`` and every table's ``.md``) with
:class:`Translator`, and the figures translate their own texts through
:func:`current` (the language :func:`language` set for the run of the command). The CSV
files keep their English column names: scripts read them by name.

A text is translated whole by :data:`PHRASES`: English templates whose ``{fields}`` take
any text (each field's text is translated too: a note inside a title); a table's header
by :data:`COLUMNS` (``share_<category>`` and ``<direction>_<language>`` by rule); a cell
by :data:`VALUES` or, split at ``"; "``, by the phrases. What no entry covers stays in
English (names of universities, domains, theme terms and category keys are data);
``tests/webometrics/test_report_language.py`` fails on any English sentence of the
English report left in the Russian one, so a new caption needs its line here.

Examples
--------
>>> tr = Translator("ru")
>>> tr.text("Table 3: external (outgoing) and citing domains by language (run 4)")
'Таблица 3: внешние (исходящие) и цитирующие домены по языкам (обход 4)'
>>> tr.column("share_universities"), tr.column("citing_ru"), tr.value("outgoing")
('доля: universities', 'цитирующие, ru', 'исходящее')
>>> Translator("en").text("Change between runs")
'Change between runs'
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from functools import cached_property
from pathlib import Path

__all__ = ["COLUMNS", "PHRASES", "VALUES", "Translator", "current", "language", "translate_report"]

LANGUAGES = ("en", "ru")

PHRASES: dict[str, str] = {
    # titles of the tables (build.py, ranks.py)
    "Table 2: the external web environment of the universities (run {run})": (
        "Таблица 2: внешнее веб-окружение университетов (обход {run})"
    ),
    "Table 2: the external web environment of the universities (run {run}, collection "
    "{collection})": (
        "Таблица 2: внешнее веб-окружение университетов (обход {run}, коллекция {collection})"
    ),
    "Collections compared: Table 2 of each collection's newest run ({runs}); this report "
    "is built from {collection}": (
        "Сравнение коллекций: таблица 2 по последнему обходу каждой коллекции ({runs}); "
        "этот отчёт построен по коллекции {collection}"
    ),
    "{collection}: run {run}": "{collection}: обход {run}",
    "Table 3: external (outgoing) and citing domains by language (run {run})": (
        "Таблица 3: внешние (исходящие) и цитирующие домены по языкам (обход {run})"
    ),
    "Category shares per university (Figures 2-3; analyst overrides applied; run {run}). "
    "share: of every domain; known_share: of the domains with evidence (unknown = never "
    "fetched or no text, left out)": (
        "Доли категорий по университетам (рисунки 2-3; с поправками аналитиков; обход "
        "{run}). share: от всех доменов; known_share: от доменов с данными (unknown — не "
        "загружены или без текста — не учитываются)"
    ),
    "Category shares per country (distinct domains; run {run}; known_share: of the "
    "domains with evidence)": (
        "Доли категорий по странам (различные домены; обход {run}; known_share: от "
        "доменов с данными)"
    ),
    "Web Impact Factor variants (run {run}; definitions in store/analytics/__init__.py)": (
        "Варианты Web Impact Factor (обход {run}; определения в store/analytics/__init__.py)"
    ),
    "Domains that appeared or disappeared": "Появившиеся и исчезнувшие домены",
    "Change between runs": "Изменения между обходами",
    "Clusters of the newest {method} clustering (else the newest of another method) per "
    "university and direction, with their themes and the category vote's support (run "
    "{run})": (
        "Кластеры последней кластеризации {method} (иначе последней другим методом) по "
        "университетам и направлениям, с темами и поддержкой голосования за категорию "
        "(обход {run})"
    ),
    "Citing domains by source and the overlap between sources (every stored run; "
    "definitions in store/impact.py)": (
        "Цитирующие домены по источникам и пересечение источников (все сохранённые "
        "обходы; определения в store/impact.py)"
    ),
    "Rank-weighted in-link counts from Common Crawl web graphs (sums of the citing nodes' "
    "harmonic centrality and PageRank)": (
        "Взвешенные по рангу числа входящих ссылок из веб-графов Common Crawl (суммы "
        "гармонической центральности и PageRank цитирующих узлов)"
    ),
    "The groups of each university against its rank (run {run}; shares over the domains "
    "with evidence; cluster columns empty without a clustering of the run)": (
        "Группы каждого университета и его ранг (обход {run}; доли от доменов с данными; "
        "столбцы кластеров пусты без кластеризации этого обхода)"
    ),
    "Rank correlations of the groups with the Webometrics rank (run {run}): {note}; "
    "interval: paired bootstrap, {n} resamples, seed {seed}": (
        "Ранговые корреляции групп с рангом Webometrics (обход {run}): {note}; интервал: "
        "парный бутстрэп, {n} повторных выборок, seed {seed}"
    ),
    "rank 1 is the best: a negative ρ or τ means a higher factor goes with a better "
    "(smaller) rank": (
        "ранг 1 — лучший: отрицательные ρ или τ означают, что больший фактор сопутствует "
        "лучшему (меньшему) рангу"
    ),
    "_no data_": "_нет данных_",
    # the figures (render.py, ranks.py)
    "Figure 2: sites the universities link to (run {run}; share of the domains with evidence)": (
        "Рисунок 2: сайты, на которые ссылаются университеты (обход {run}; доля доменов с данными)"
    ),
    "Figure 3: sites citing the universities (run {run}; share of the domains with evidence)": (
        "Рисунок 3: сайты, цитирующие университеты (обход {run}; доля доменов с данными)"
    ),
    "per university": "по университетам",
    "per country": "по странам",
    "no data": "нет данных",
    "{n} unknown": "{n} неизвестных",
    "share of the external domains with evidence, %": "доля внешних доменов с данными, %",
    "no ranked university": "нет университетов с рангом",
    "universities + scientific communities, % of domains with evidence": (
        "университеты + научные сообщества, % доменов с данными"
    ),
    "Webometrics rank (1 = best, at the top)": "ранг Webometrics (1 — лучший, вверху)",
    "Share of universities and scientific communities against the rank (run {run}); a "
    "rise from left to right (higher share, better rank) is what the paper concluded": (
        "Доля университетов и научных сообществ и ранг (обход {run}); подъём слева "
        "направо (больше доля — лучше ранг) — вывод статьи"
    ),
    "{symbol} undefined": "{symbol} не определён",
    # readings and notes of the rank correlations (analyse/ranks.py)
    "{sym} < 0: a higher {factor} goes with a better (smaller) {what}": (
        "{sym} < 0: чем больше {factor}, тем лучше (меньше) {what}"
    ),
    "{sym} > 0: a higher {factor} goes with a worse (larger) {what}": (
        "{sym} > 0: чем больше {factor}, тем хуже (больше) {what}"
    ),
    "{sym} = 0: no monotone association of {factor} with the {what}": (
        "{sym} = 0: нет монотонной связи {factor} с {what}"
    ),
    "n = {n}: at least {k} universities with both {factor} and {target} are needed; "
    "{sym} is undefined": (
        "n = {n}: нужно не меньше {k} университетов с {factor} и {target}; {sym} не определён"
    ),
    "{factor} is the same ({x}) for all {n} universities: {sym} is undefined": (
        "{factor} одинаков ({x}) у всех {n} университетов: {sym} не определён"
    ),
    "n = {n} is too small to conclude (fewer than {k} universities): with so few the "
    "bootstrap interval is unreliable too": (
        "n = {n} слишком мало для вывода (меньше {k} университетов): при таком числе и "
        "бутстрэп-интервал ненадёжен"
    ),
    "the {p} % interval includes 0": "{p}-процентный интервал содержит 0",
    "{m} of {n} resamples had a constant {factor} or {target} (no {sym}) and are left out "
    "of the interval": (
        "в {m} из {n} повторных выборок {factor} или {target} постоянны (нет {sym}); они "
        "не вошли в интервал"
    ),
    # README.md (build.py)
    "Webometrics report: crawl run {run}": "Отчёт webometrics: обход {run}",
    "Collection: {collection} (`webometrics report --collection`).": (
        "Коллекция: {collection} (`webometrics report --collection`)."
    ),
    "Other collections with data: {others} (`collections.md`).": (
        "Другие коллекции с данными: {others} (`collections.md`)."
    ),
    "Table 2 of each collection's newest run (live, archive periods)": (
        "Таблица 2 по последнему обходу каждой коллекции (живой веб, периоды архивов)"
    ),
    "Written {when}. Categories apply the analysts' overrides. Definitions (external links "
    "and domains, citing pages and domains, domain language, category shares, Web Impact "
    "Factors) are in the docstring of `store/analytics/__init__.py`; the same numbers come "
    "from the SQL views (`v_university_table2`, `v_environment`, `v_category_share`, ...).": (
        "Составлен {when}. Категории учитывают поправки аналитиков. Определения (внешние "
        "ссылки и домены, цитирующие страницы и домены, язык домена, доли категорий, Web "
        "Impact Factor) — в docstring `store/analytics/__init__.py`; те же числа дают "
        "SQL-представления (`v_university_table2`, `v_environment`, `v_category_share`, ...)."
    ),
    "Table 2: external links/domains, citing pages/domains per university": (
        "Таблица 2: внешние ссылки и домены, цитирующие страницы и домены по университетам"
    ),
    "Table 3: outgoing and citing domains by language": (
        "Таблица 3: исходящие и цитирующие домены по языкам"
    ),
    "category shares per university (Figures 2-3)": "доли категорий по университетам (рисунки 2-3)",
    "category shares per country (Figures 2-3)": "доли категорий по странам (рисунки 2-3)",
    "Figure 2: categories of the sites the universities link to": (
        "Рисунок 2: категории сайтов, на которые ссылаются университеты"
    ),
    "Figure 3: categories of the sites citing the universities": (
        "Рисунок 3: категории сайтов, цитирующих университеты"
    ),
    "Web Impact Factor variants": "варианты Web Impact Factor",
    "domains that appeared or disappeared since the earlier run": (
        "домены, появившиеся или исчезнувшие после предыдущего обхода"
    ),
    "kept, appeared and disappeared domains per university": (
        "сохранившиеся, появившиеся и исчезнувшие домены по университетам"
    ),
    "final clusters with size, category and theme": "итоговые кластеры: размер, категория, тема",
    "citing domains per university and source, overlap of sources": (
        "цитирующие домены по университетам и источникам, пересечение источников"
    ),
    "rank-weighted in-link counts (harmonic centrality, PageRank)": (
        "взвешенные по рангу входящие ссылки (гармоническая центральность, PageRank)"
    ),
    "clusters, their size and the category shares per university, by rank": (
        "кластеры, их размер и доли категорий по университетам, по рангу"
    ),
    "Spearman's ρ and Kendall's τ of the groups with the rank (n, 95 % interval, note); "
    "figure: the headline share against the rank": (
        "ρ Спирмена и τ Кендалла групп с рангом (n, 95-процентный интервал, примечание); "
        "рисунок: главная доля и ранг"
    ),
    "every categorised domain (override applied)": "все домены с категорией (с поправками)",
    "university→domain graph of the outgoing environment": (
        "граф университет→домен исходящего окружения"
    ),
    "domain→university graph of the citing environment": (
        "граф домен→университет цитирующего окружения"
    ),
    "co-outlink overlap of the universities (shared domains, Jaccard)": (
        "пересечение исходящих ссылок университетов (общие домены, Жаккар)"
    ),
    "co-inlink overlap of the universities (shared domains, Jaccard)": (
        "пересечение входящих ссылок университетов (общие домены, Жаккар)"
    ),
    "domains most universities link to": "домены, на которые ссылается больше всего университетов",
    "domains citing most universities": "домены, цитирующие больше всего университетов",
    "centralities in the outgoing graph": "центральности в графе исходящих ссылок",
    "centralities in the citing graph": "центральности в графе цитирования",
    # the two share definitions (build.py) and the rank statistics (ranks.py, analyse/ranks.py)
    "Category shares per university (Figures 2-3; analyst overrides applied; run {run}). "
    "{definitions}. share: of every domain; known_share: of the domains with evidence "
    "(unknown = never fetched or no text, left out). {low}": (
        "Доли категорий по университетам (рисунки 2-3; с поправками аналитиков; обход "
        "{run}). {definitions}. share: от всех доменов; known_share: от доменов с данными "
        "(unknown — не загружены или без текста — не учитываются). {low}"
    ),
    "Category shares per country (distinct domains; run {run}). {definitions}. {low}": (
        "Доли категорий по странам (различные домены; обход {run}). {definitions}. {low}"
    ),
    "definition domain: each domain in its own category (the default); cluster: each "
    "final cluster's member domains in the cluster's voted category, as the paper counted "
    "(a cluster whose vote has support <= {x} is mixed; domains in no cluster are left out)": (
        "определение domain: каждый домен в своей категории (по умолчанию); cluster: домены "
        "каждого итогового кластера в категории, за которую проголосовал кластер, как "
        "считала статья (кластер с поддержкой голосования <= {x} — смешанный, mixed; домены "
        "вне кластеров не учитываются)"
    ),
    "low_confidence(_share): the domains (the part of known_share) resting on unreviewed "
    "domains (no analyst override) scored below {x} ([analyse] low_confidence)": (
        "low_confidence(_share): домены (часть known_share), которые опираются на "
        "непроверенные домены (без поправки аналитика) с оценкой ниже {x} ([analyse] "
        "low_confidence)"
    ),
    "The two share definitions per university (run {run}): {compared}": (
        "Два определения долей по университетам (обход {run}): {compared}"
    ),
    "The two share definitions per country (run {run}): {compared}": (
        "Два определения долей по странам (обход {run}): {compared}"
    ),
    "known_share by domain and by cluster side by side, difference = cluster - domain "
    "(empty: no clustering of the run); the low-confidence parts of each": (
        "known_share по доменам и по кластерам рядом, difference = cluster - domain (пусто: "
        "нет кластеризации этого обхода); части каждой доли с низкой уверенностью"
    ),
    "shares by domain and by cluster (the paper's way) per university, side by side with "
    "their difference": (
        "доли по доменам и по кластерам (как в статье) по университетам, рядом, с разностью"
    ),
    "shares by domain and by cluster per country": "доли по доменам и по кластерам по странам",
    "Figure 2 by cluster (each cluster's members in its category, as the paper)": (
        "Рисунок 2 по кластерам (члены каждого кластера в его категории, как в статье)"
    ),
    "Figure 3 by cluster (as the paper)": "Рисунок 3 по кластерам (как в статье)",
    "does each correlation's sign hold under both share definitions and every stored "
    "clustering setting": (
        "сохраняется ли знак каждой корреляции при обоих определениях долей и всех "
        "сохранённых настройках кластеризации"
    ),
    "Spearman's ρ and Kendall's τ of the groups with the rank under both share definitions "
    "(n, p, p adjusted by Holm and by Benjamini-Hochberg, 95 % interval from 10 universities "
    "on, note)": (
        "ρ Спирмена и τ Кендалла групп с рангом при обоих определениях долей (n, p, p с "
        "поправкой Холма и Бенджамини-Хохберга, 95-процентный интервал начиная с 10 "
        "университетов, примечание)"
    ),
    "The groups of each university against its rank (run {run}; shares over the domains "
    "with evidence, by domain: each in its own category, by cluster: each cluster's members "
    "in its category, as the paper; cluster columns empty without a clustering of the run; "
    "share_academic_low_confidence: the part of share_academic resting on unreviewed "
    "domains scored below {x})": (
        "Группы каждого университета и его ранг (обход {run}; доли от доменов с данными, по "
        "доменам: каждый в своей категории, по кластерам: члены каждого кластера в его "
        "категории, как в статье; столбцы кластеров пусты без кластеризации этого обхода; "
        "share_academic_low_confidence: часть share_academic, которая опирается на "
        "непроверенные домены с оценкой ниже {x})"
    ),
    "Rank correlations of the groups with the Webometrics rank (run {run}): {note}. p_holm "
    "and q_bh: p adjusted over the {tests} tests of each definition (every factor x "
    "statistic x direction x rank) by Holm's method and by Benjamini-Hochberg's. Below {k} "
    "universities p is an exact permutation test (all n! pairings up to 8, else {n} random "
    "ones, seed {seed}) and no interval is given (too few to conclude; the note says why); "
    "from 10 on, p and the 95 % interval are Fisher's z of the same statistic (Bonett-Wright "
    "for ρ, Fieller for τ), so the interval excludes 0 exactly when p < 0.05": (
        "Ранговые корреляции групп с рангом Webometrics (обход {run}): {note}. p_holm и "
        "q_bh: p с поправкой на {tests} проверок каждого определения (все факторы x "
        "статистики x направления x ранги) методом Холма и методом Бенджамини-Хохберга. "
        "При числе университетов меньше {k} p — точный перестановочный тест (все n! "
        "перестановок до 8, иначе {n} случайных, seed {seed}), интервал не даётся (слишком "
        "мало для вывода; причина — в примечании); начиная с 10, p и 95-процентный интервал "
        "— z Фишера той же статистики (Бонетт-Райт для ρ, Фиеллер для τ), так что интервал "
        "не содержит 0 ровно тогда, когда p < 0.05"
    ),
    "n = {n} < {k}: too few universities to conclude: one university more or less can "
    "change the sign": (
        "n = {n} < {k}: слишком мало университетов для вывода: на один университет больше "
        "или меньше — и знак может измениться"
    ),
    "p is an exact permutation test ({how}), the smallest it can be is 2/n! = {x}": (
        "p — точный перестановочный тест ({how}), наименьшее возможное значение 2/n! = {x}"
    ),
    "all n! pairings": "все n! перестановок",
    "random pairings": "случайные перестановки",
    "no interval (Fisher's z needs about {k}, a bootstrap of {n} draws mostly repeated "
    "universities)": (
        "интервала нет (z Фишера нужно около {k}, бутстрэп из {n} выборок в основном "
        "повторял бы университеты)"
    ),
    "Does each sign hold under both share definitions and every clustering setting stored "
    "for run {run}? holds: the same sign under every defined variant; flips: it changes; "
    "undefined: fewer than two variants defined. Settings: {legend}": (
        "Сохраняется ли каждый знак при обоих определениях долей и всех настройках "
        "кластеризации, сохранённых для обхода {run}? holds: один знак во всех определённых "
        "вариантах; flips: знак меняется; undefined: определено меньше двух вариантов. "
        "Настройки: {legend}"
    ),
    "defined under {m} of {n} variants only": "определено только в {m} из {n} вариантов",
    "negative under all {n} defined variants": "отрицательный во всех {n} определённых вариантах",
    "positive under all {n} defined variants": "положительный во всех {n} определённых вариантах",
    "the sign changes: {signs}": "знак меняется: {signs}",
    "negative under all {n} defined variants ({m} undefined)": (
        "отрицательный во всех {n} определённых вариантах ({m} не определены)"
    ),
    "positive under all {n} defined variants ({m} undefined)": (
        "положительный во всех {n} определённых вариантах ({m} не определены)"
    ),
    "figure: the headline share against the rank": "рисунок: главная доля и ранг",
}
"""English template -> Russian template; a ``{field}`` takes any text."""

COLUMNS: dict[str, str] = {
    "file": "файл",
    "what": "что",
    "university": "университет",
    "university_a": "университет A",
    "university_b": "университет B",
    "domains": "домены",
    "domain": "домен",
    "country": "страна",
    "rank": "ранг",
    "impact_rank": "ранг по цитированию",
    "external_links": "внешние ссылки",
    "external_domains": "внешние домены",
    "citing_pages": "цитирующие страницы",
    "citing_domains": "цитирующие домены",
    "site_pages": "страницы сайта",
    "collection": "коллекция",
    "direction": "направление",
    "category": "категория",
    "share": "доля",
    "known_share": "доля среди известных",
    "wif_pages": "WIF по страницам",
    "wif_domains": "WIF по доменам",
    "outlink_density": "плотность исходящих ссылок",
    "in_out_ratio": "входящие / исходящие",
    "visibility_share": "доля видимости",
    "change": "изменение",
    "run_before": "обход до",
    "run_after": "обход после",
    "links_before": "ссылок до",
    "links_after": "ссылок после",
    "before": "до",
    "after": "после",
    "kept": "сохранились",
    "appeared": "появились",
    "disappeared": "исчезли",
    "comparable": "сравнимы",
    "run_id": "обход",
    "clustering_id": "кластеризация",
    "rank_edition": "издание рейтинга",
    "algorithm": "алгоритм",
    "label": "метка",
    "size": "размер",
    "category_score": "оценка категории",
    "category_support": "поддержка категории",
    "category_voters": "голосовавших",
    "overridden": "поправлено",
    "theme": "тема",
    "top_domains": "крупнейшие домены",
    "kind": "вид",
    "hosts": "хосты",
    "only_here": "только здесь",
    "missed": "пропущено",
    "domains_all": "доменов всего",
    "n_clusters": "кластеров",
    "clustered_size": "доменов в кластерах",
    "singletons": "одиночных",
    "evidence_domains": "доменов с данными",
    "unknown": "неизвестных",
    "uncategorised": "без категории",
    "target": "цель",
    "factor": "фактор",
    "statistic": "статистика",
    "estimate": "оценка",
    "n": "n",
    "low": "нижняя граница",
    "high": "верхняя граница",
    "confidence": "уровень доверия",
    "p_value": "p-значение",
    "reading": "прочтение",
    "note": "примечание",
    "release": "выпуск",
    "level": "уровень",
    "source": "источник",
    "definition": "определение",
    "domain_share": "доля по доменам",
    "cluster_share": "доля по кластерам",
    "difference": "разность",
    "low_confidence": "с низкой уверенностью",
    "low_confidence_share": "доля с низкой уверенностью",
    "domain_low_confidence_share": "по доменам: доля с низкой уверенностью",
    "cluster_low_confidence_share": "по кластерам: доля с низкой уверенностью",
    "p_holm": "p (Холм)",
    "q_bh": "q (Бенджамини-Хохберг)",
    "tests": "проверок",
    "holds": "сохраняется",
    "line": "вывод",
    "signs": "знаки",
}
"""A column's English name -> its Russian header (Markdown only)."""

VALUES: dict[str, str] = {
    "outgoing": "исходящее",
    "citing": "цитирующее",
    "appeared": "появился",
    "disappeared": "исчез",
    "kept": "сохранился",
    "True": "да",
    "False": "нет",
    "spearman": "Спирмен",
    "kendall": "Кендалл",
    "rank": "ранг",
    "impact_rank": "ранг по цитированию",
    "crawl": "обход",
    "backlinks": "обратные ссылки",
    "commoncrawl": "Common Crawl",
    "domain": "по доменам",
    "cluster": "по кластерам",
    "mixed": "смешанный",
    "holds": "сохраняется",
    "flips": "меняется",
    "undefined": "не определён",
}
"""A cell's whole English text -> Russian (directions, changes, statistics, sources)."""

_DIRECTIONS = {"outgoing": "исходящие", "citing": "цитирующие"}
_FIELD = re.compile(r"\{(\w+)\}")


def _pattern(template: str) -> re.Pattern[str]:
    """The regular expression of an English template: its fields take any text."""
    parts = _FIELD.split(template)
    rx = "".join(f"(?P<{p}>.+?)" if i % 2 else re.escape(p) for i, p in enumerate(parts))
    return re.compile(rf"^{rx}$", re.DOTALL)


class Translator:
    """Translates the report's English texts into ``language`` (``en``: unchanged).

    Parameters
    ----------
    language : {"en", "ru"}
    """

    def __init__(self, language: str = "en") -> None:
        if language not in LANGUAGES:
            raise ValueError(f"no report language {language!r}; choose {', '.join(LANGUAGES)}")
        self.language = language

    @cached_property
    def _patterns(self) -> list[tuple[re.Pattern[str], str]]:
        return [(_pattern(en), ru) for en, ru in PHRASES.items()]

    def text(self, text: str) -> str:
        """A whole text (a title, a caption, a note), by :data:`PHRASES`; its fields'
        texts translated too. Unchanged when no template fits."""
        if self.language == "en" or not text.strip():
            return text
        for rx, ru in self._patterns:
            m = rx.match(text)
            if m:
                return ru.format(**{k: self.value(v) for k, v in m.groupdict().items()})
        return text

    def column(self, name: str) -> str:
        """A table's column header."""
        if self.language == "en":
            return name
        if name in COLUMNS:
            return COLUMNS[name]
        if name.startswith("share_"):
            return f"доля: {name.removeprefix('share_')}"
        direction, _, lang = name.partition("_")
        if direction in _DIRECTIONS and lang:
            return f"{_DIRECTIONS[direction]}, {lang}"
        return name

    def value(self, cell: str) -> str:
        """A table cell: :data:`VALUES`, else by a phrase, whole or each of its
        ``"; "``-separated parts."""
        if self.language == "en":
            return cell
        if cell in VALUES:
            return VALUES[cell]
        whole = self.text(cell)
        if whole != cell:
            return whole
        return "; ".join(self.text(part) for part in cell.split("; "))

    def markdown(self, markdown: str) -> str:
        """A Markdown file of the report: headings and paragraphs by :meth:`text` (a
        paragraph's lines joined), a table's header by :meth:`column` and its cells by
        :meth:`value`."""
        if self.language == "en":
            return markdown
        out: list[str] = []
        paragraph: list[str] = []

        def flush() -> None:
            if paragraph:
                out.append(self.text(" ".join(paragraph)))
                paragraph.clear()

        header_next = True
        for line in markdown.splitlines():
            if line.startswith("|"):
                flush()
                cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
                if set(line) <= set("|-: "):
                    out.append(line)
                    continue
                if header_next:
                    out.append("| " + " | ".join(self.column(c) for c in cells) + " |")
                    header_next = False
                else:
                    out.append("| " + " | ".join(self.value(c) for c in cells) + " |")
                continue
            header_next = True
            if line.startswith("#"):
                flush()
                level, _, title = line.partition(" ")
                out.append(f"{level} {self.text(title)}")
            elif not line.strip():
                flush()
                out.append(line)
            else:
                paragraph.append(line.strip())
        flush()
        return "\n".join(out) + "\n"


_CURRENT: ContextVar[str] = ContextVar("report_language", default="en")


def current() -> Translator:
    """The translator of the report being written (English outside :func:`language`)."""
    return Translator(_CURRENT.get())


@contextlib.contextmanager
def language(code: str) -> Iterator[Translator]:
    """Write the report's figures in ``code`` within the block (a context variable: the
    figures are drawn deep in the build, which passes no language down)."""
    tr = Translator(code)  # an unknown language fails here, before anything is written
    token = _CURRENT.set(code)
    try:
        yield tr
    finally:
        _CURRENT.reset(token)


def translate_report(files: Iterable[Path], code: str) -> list[Path]:
    """Rewrite the Markdown files among ``files`` in ``code``; returns those rewritten."""
    tr = Translator(code)
    done: list[Path] = []
    if code == "en":
        return done
    for path in files:
        if path.suffix == ".md":
            path.write_text(tr.markdown(path.read_text(encoding="utf-8")), encoding="utf-8")
            done.append(path)
    return done
