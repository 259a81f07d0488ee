"""Links between the app and the documentation site, both ways.

* App → docs: every hint in the app links to its docs page, in both editions (文档: the Chinese one at the
  site's root; docs: the English one under ``en/``). The app serves the built site itself at
  ``/docs`` (see ``demo.docs_site``), so the default base is the relative ``docs``; set
  ``ATTENTION_LAB_DOCS_URL`` to link to a site hosted elsewhere instead.
* Docs → app: every figure in the docs has an "open in the app" link whose URL query carries the
  figure's input and settings; the app reads the query on load ([`parse_query`][demo.links.parse_query]),
  fills the tab and runs it. The docs build (``docs/hooks.py``) writes links against
  ``ATTENTION_LAB_APP_URL`` (default ``http://127.0.0.1:7860/``, a local ``python app.py``; the site the
  app serves itself uses ``/``).

The query: ``tab`` (``translation``, ``couplet``, ``own``, ``compare`` or ``live``), ``text``, and per control
``variant``, ``window``, ``hard``, ``beam``, ``names`` (translation: ``names=0`` turns the names switch off)
(Compare: ``task``, and each control with an ``a_`` or ``b_``
prefix; Live: ``task``, ``score``, ``window``, ``attention``, ``min_len``, ``max_len``, ``steps``).
For the Transformer, ``layer`` (1-based) and ``head`` (1-based, or ``mean``) choose the attention map
shown (Compare: ``a_layer``, ``b_head`` …); a malformed one is reported to the visitor, not ignored.

What a task tab's heatmap shows: ``show=gradient`` (input × gradient; default ``attention``). The translation
tab's gold alignment: ``gold`` (a sentence number), ``gold_set`` (``tsinghua``, the default, or ``denero``) and
``links`` (``threshold``, the default, or ``argmax``): ``?tab=translation&gold=12&gold_set=tsinghua``.

``tab=own`` opens the models of your own (``python app.py --models DIR``); ``model`` names one (the name in
its drop-down: the folder's name, or the Hub repo id), a synonym of ``variant``:
``?tab=own&model=de-en&text=ich+sehe+den+Hund+.&beam=1``. Compare takes ``task=own`` with ``a_model`` and
``b_model``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import urlencode

from attention_core.model.scores import SCORES

DOCS_URL_ENV = "ATTENTION_LAB_DOCS_URL"
TASK_TABS = ("translation", "couplet", "own")
"""Tabs that run one model on one input (the same controls; ``own``: the models of your own)."""
TABS = (*TASK_TABS, "compare", "live")
"""Tab ids, also the values of the ``tab`` query parameter."""


def docs_base() -> str:
    """Where the app's hints point: ``ATTENTION_LAB_DOCS_URL``, else the site this app serves (``docs``)."""
    return os.environ.get(DOCS_URL_ENV, "").rstrip("/") or "docs"


DOCS_LANGUAGES = ("zh", "en")
"""The docs site's editions: Chinese at the site's root, English under ``en/`` (mkdocs-static-i18n)."""


def docs_href(page: str, anchor: str = "", lang: str = "zh") -> str:
    """The address of a docs page (``theory/scores``) in one edition, optionally at an anchor.

    Both editions give a section the same anchor (``{ #coverage }`` in both files).

    >>> docs_href("theory/scores", "concat")
    'docs/theory/scores/#concat'
    >>> docs_href("results", lang="en")
    'docs/en/results/'
    """
    if lang not in DOCS_LANGUAGES:
        raise ValueError(f"unknown docs edition {lang!r}; choose one of {', '.join(DOCS_LANGUAGES)}")
    page = page.strip("/")
    edition = "" if lang == "zh" else f"{lang}/"
    return f"{docs_base()}/{edition}" + (f"{page}/" if page else "") + (f"#{anchor}" if anchor else "")


DOCS_LABELS = ("文档", "docs")
"""How a hint names the two editions' links (in the order of ``DOCS_LANGUAGES``)."""


def _editions(page: str, anchor: str, labels: tuple[str, str]) -> list[tuple[str, str]]:
    """``(address, label)`` of a docs page in each edition."""
    return [(docs_href(page, anchor, lang), label) for lang, label in zip(DOCS_LANGUAGES, labels, strict=True)]


def docs_link(page: str, anchor: str = "", text: tuple[str, str] = DOCS_LABELS) -> str:
    """HTML links to a docs page in both editions (中文, English), each opening in a new tab.

    The app speaks both languages at once, so each hint links to the page a reader of either can read.

    >>> docs_link("theory/scores")
    '<a href="docs/theory/scores/" target="_blank" rel="noopener">文档 ↗</a> · \
<a href="docs/en/theory/scores/" target="_blank" rel="noopener">docs ↗</a>'
    """
    return " · ".join(f'<a href="{href}" target="_blank" rel="noopener">{label} ↗</a>'
                      for href, label in _editions(page, anchor, text))


def docs_markdown_link(page: str, anchor: str = "") -> str:
    """Markdown links to a docs page in both editions (for text that carries no raw HTML, like the info line).

    >>> docs_markdown_link("results", "bleu-by-length")
    '[文档 ↗](docs/results/#bleu-by-length) · [docs ↗](docs/en/results/#bleu-by-length)'
    """
    return " · ".join(f"[{label} ↗]({href})" for href, label in _editions(page, anchor, DOCS_LABELS))


def app_query(tab: str, **params: object) -> str:
    """The query string that opens ``tab`` with these inputs and settings.

    Booleans are written ``1``/``0``; ``None`` values are left out.

    >>> app_query("translation", text="今天天气很好", beam=5, hard=False)
    '?tab=translation&text=%E4%BB%8A%E5%A4%A9%E5%A4%A9%E6%B0%94%E5%BE%88%E5%A5%BD&beam=5&hard=0'
    """
    if tab not in TABS:
        raise ValueError(f"unknown tab {tab!r}; choose one of {', '.join(TABS)}")
    values = {"tab": tab}
    for key, value in params.items():
        if value is None:
            continue
        values[key] = ("1" if value else "0") if isinstance(value, bool) else str(value)
    return "?" + urlencode(values)


def _flag(value: str) -> bool:
    return value.strip().lower() in ("1", "true", "yes", "on")


def _int(value: str, low: int, high: int) -> int | None:
    try:
        number = int(value)
    except ValueError:
        return None
    return number if low <= number <= high else None


def parse_controls(params: Mapping[str, str], prefix: str = "") -> dict[str, object]:
    """The decoding controls found in a query (unknown or malformed values are ignored).

    Returns:
        A dict with any of ``variant`` (or its synonym ``model``), ``window``, ``hard``, ``beam``, the
        translation tab's ``names`` switch and the couplet rules ``constrained``, ``mirror``, ``no_reuse``,
        ``tone``, ``cliche_penalty``.

    >>> parse_controls({"variant": "luong-dot", "beam": "5", "hard": "1", "window": "99"})
    {'variant': 'luong-dot', 'hard': True, 'beam': 5}
    >>> parse_controls({"model": "de-en"})
    {'variant': 'de-en'}
    >>> parse_controls({"names": "0"})
    {'names': False}
    """
    get = {key[len(prefix):]: value for key, value in params.items() if key.startswith(prefix)}
    out: dict[str, object] = {}
    if get.get("variant") or get.get("model"):
        out["variant"] = (get.get("variant") or get["model"])[:200]
    window = get.get("window", "")
    if window in ("default", "global") or _int(window, 1, 10) is not None:
        out["window"] = window
    if "hard" in get:
        out["hard"] = _flag(get["hard"])
    if "names" in get:
        out["names"] = _flag(get["names"])
    if "beam" in get and _int(get["beam"], 1, 10) is not None:
        out["beam"] = int(get["beam"])
    for rule in ("constrained", "mirror", "no_reuse"):
        if rule in get:
            out[rule] = _flag(get[rule])
    if get.get("tone") in ("classical", "opposite", "off"):
        out["tone"] = get["tone"]
    if "cliche" in get:
        try:
            penalty = float(get["cliche"])
        except ValueError:
            penalty = -1.0
        if 0.0 <= penalty <= 2.0:
            out["cliche_penalty"] = penalty
    return out


def parse_view(params: Mapping[str, str], prefix: str = "") -> tuple[dict[str, object], list[str]]:
    """The Transformer layer and head a query asks for, and a message for each malformed value.

    Whether the model has that layer and head is checked against it when the app opens
    (``demo.handlers.check_view``).

    Returns:
        ``({"layer": int, "head": "mean" | int}, problems)``, either key absent when not asked for.

    >>> parse_view({"layer": "2", "head": "mean"})
    ({'layer': 2, 'head': 'mean'}, [])
    >>> parse_view({"b_layer": "0", "b_head": "x"}, "b_")[1][0]
    'b_layer=0: 层号须为正整数 / the layer must be a whole number from 1 (1 = nearest the input)'
    """
    view: dict[str, object] = {}
    problems = []
    layer = params.get(prefix + "layer")
    if layer is not None:
        if _int(layer.strip(), 1, 64) is not None:
            view["layer"] = int(layer)
        else:
            problems.append(f"{prefix}layer={layer[:20]}: 层号须为正整数 / the layer must be a whole number "
                            "from 1 (1 = nearest the input)")
    head = params.get(prefix + "head")
    if head is not None:
        if head.strip().lower() == "mean":
            view["head"] = "mean"
        elif _int(head.strip(), 1, 64) is not None:
            view["head"] = int(head)
        else:
            problems.append(f"{prefix}head={head[:20]}: 注意力头须为正整数或 mean / the head must be a whole number "
                            "from 1, or mean (the mean of the heads)")
    return view, problems


SHOWN = ("attention", "gradient")
"""Values of ``show``: what a task tab's heatmap shows."""
GOLD_SIZES = {"tsinghua": 450, "denero": 150}
"""The gold sets a ``gold_set`` may name, and their sentences."""


def parse_gold(params: Mapping[str, str]) -> tuple[dict[str, object], str]:
    """The gold sentence a query asks the translation tab to show, or a message for a malformed one.

    >>> parse_gold({"gold": "12"})
    ({'name': 'tsinghua', 'number': 12, 'rule': 'threshold'}, '')
    >>> parse_gold({"gold": "151", "gold_set": "denero"})[1]
    'gold=151: 句号须在 1–150 / DeNero has sentences 1–150'
    """
    name = params.get("gold_set", "tsinghua")
    if name not in GOLD_SIZES:
        return {}, f"gold_set={name[:20]}: 未知的对齐集 / choose {' or '.join(GOLD_SIZES)}"
    size = GOLD_SIZES[name]
    number = _int(params.get("gold", "").strip(), 1, size)
    if number is None:
        return {}, (f"gold={params.get('gold', '')[:20]}: 句号须在 1–{size} / "
                    f"{'Tsinghua' if name == 'tsinghua' else 'DeNero'} has sentences 1–{size}")
    rule = params.get("links") if params.get("links") in ("threshold", "argmax") else "threshold"
    return {"name": name, "number": number, "rule": rule}, ""


def parse_query(params: Mapping[str, str]) -> dict[str, object]:
    """Read the app's URL query: which tab to open, its text, and its controls.

    Returns:
        ``{"tab": ..., "text": ..., "controls": {...}}`` plus, for Compare, ``task``, ``a`` and ``b``
        (each side's controls); an empty dict when the query names no known tab. A Transformer
        ``layer``/``head`` comes as ``view`` (Compare: ``a_view``, ``b_view``), and messages about
        malformed ones as ``problems``; both only when there are any.

    >>> parse_query({"tab": "couplet", "text": "两个黄鹂鸣翠柳", "beam": "5"})
    {'tab': 'couplet', 'text': '两个黄鹂鸣翠柳', 'controls': {'beam': 5}}
    >>> parse_query({"tab": "translation", "variant": "transformer", "layer": "1", "head": "3"})["view"]
    {'layer': 1, 'head': 3}
    >>> parse_query({"tab": "nonsense"})
    {}
    """
    tab = params.get("tab", "")
    if tab not in TABS:
        return {}
    query: dict[str, object] = {"tab": tab, "text": params.get("text", "")[:1000],
                                "controls": parse_controls(params)}
    problems: list[str] = []
    if tab in TASK_TABS:
        view, problems = parse_view(params)
        if view:
            query["view"] = view
        if params.get("show") in SHOWN:
            query["shown"] = params["show"]
    if tab == "translation" and "gold" in params:
        gold, problem = parse_gold(params)
        if gold:
            query["gold"] = gold
        else:
            problems.append(problem)
    if tab == "compare":
        problems += _parse_compare(params, query)
    if problems:
        query["problems"] = problems
    if tab == "live":
        query["live"] = _parse_live(params)
    return query


def _parse_compare(params: Mapping[str, str], query: dict[str, object]) -> list[str]:
    """Compare's task and each side's controls and Transformer view, into ``query``; the problems found."""
    query["task"] = params.get("task") if params.get("task") in TASK_TABS else "translation"
    query["a"], query["b"] = parse_controls(params, "a_"), parse_controls(params, "b_")
    problems: list[str] = []
    for side in ("a", "b"):
        view, found = parse_view(params, f"{side}_")
        problems += found
        if view:
            query[f"{side}_view"] = view
    return problems


def _parse_live(params: Mapping[str, str]) -> dict[str, object]:
    """The live-training tab's settings that are given and valid."""
    live: dict[str, object] = {}
    if params.get("task") in ("reverse", "copy", "sort"):
        live["task"] = params["task"]
    if params.get("score") in SCORES:
        live["score"] = params["score"]
    window = params.get("window", "")
    if window == "global" or _int(window, 1, 10) is not None:
        live["window"] = window
    if "attention" in params:
        live["attention"] = _flag(params["attention"])
    for key, low, high in (("min_len", 1, 30), ("max_len", 1, 30), ("steps", 100, 3000)):
        if _int(params.get(key, ""), low, high) is not None:
            live[key] = int(params[key])
    return live
