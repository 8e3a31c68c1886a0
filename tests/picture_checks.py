"""Reading the timeline pages back (gradwarden.picture): the SVG of each finding, its events in
drawing order with the facts they carry, and the page's self-containedness. Shared by the tests
of ``check --output-format html``, ``debug --report`` and the browser rendering."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from typing import Dict, List, Optional

SVG_NS = "{http://www.w3.org/2000/svg}"


def svgs(html: str) -> List[ET.Element]:
    """Every timeline picture of the page (the key's legend left out), parsed as XML: the SVG
    must be well-formed on its own."""
    out = []
    for m in re.finditer(r"<svg\b.*?</svg>", html, re.S):
        root = ET.fromstring(m.group(0))
        if root.get("data-code"):
            out.append(root)
    return out


def events(svg: ET.Element) -> List[Dict[str, Optional[str]]]:
    """The events of one picture, left to right (time order), with their data attributes."""
    out = []
    for a in svg.iter(f"{SVG_NS}a"):
        if not a.get("data-kind"):
            continue
        out.append({"kind": a.get("data-kind"), "line": a.get("data-line"), "file": a.get("data-file"),
                    "step": a.get("data-step"), "version": a.get("data-version"), "from": a.get("data-from"),
                    "expects": a.get("data-expects"), "finds": a.get("data-finds"), "outcome": a.get("data-outcome"),
                    "seen": a.get("data-seen"), "href": a.get("href"), "class": a.get("class")})
    return out


def versions_in_order(evs: List[Dict[str, Optional[str]]]) -> List[int]:
    """The version counter's values the events state, in time order: a write's before and
    after, a save's recorded version, a backward's expected and found versions."""
    out: List[int] = []
    for e in evs:
        for key in ("from", "version", "expects", "finds"):
            if e.get(key) is not None:
                out.append(int(e[key]))
    return out


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set = set()
        self.hrefs: List[str] = []
        self.resources: List[str] = []
        self.tags: List[str] = []
        self.sections = 0
        self.event_items = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        if a.get("id"):
            self.ids.add(a["id"])
        if a.get("href") is not None:
            self.hrefs.append(a["href"])
        for key in ("src", "xlink:href", "srcset", "poster", "data"):
            if a.get(key):
                self.resources.append(f"{tag} {key}={a[key]}")
        if tag == "link":
            self.resources.append(f"link {a}")
        if tag == "section" and "finding" in (a.get("class") or ""):
            self.sections += 1
        if tag == "li" and (a.get("class") or "").startswith("k-"):
            self.event_items += 1


def page_facts(html: str) -> _Collect:
    p = _Collect()
    p.feed(html)
    return p


def self_contained_problems(html: str) -> List[str]:
    """What would make the page load anything or run anything: scripts, external resources,
    style imports, links that leave the page. Empty when it is self-contained."""
    facts = page_facts(html)
    problems = [f"a <{t}> element" for t in ("script", "iframe", "object", "embed", "img", "link") if t in facts.tags]
    problems += [f"an external resource: {r}" for r in facts.resources]
    if re.search(r"@import|url\((?!#)", html):  # url(#id): a marker of the same SVG
        problems.append("a CSS import or url()")
    for href in facts.hrefs:
        if not href.startswith("#"):
            problems.append(f"a link out of the page: {href}")
        elif href[1:] not in facts.ids:
            problems.append(f"a link to a missing anchor: {href}")
    return problems
