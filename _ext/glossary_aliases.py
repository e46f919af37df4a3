"""Sphinx extension: the Chinese glossary also lists other books' names for its terms.

A reader who learned from d2l-zh (《动手学深度学习》) knows dropout as 暂退法, teacher forcing as
强制教学 and layer normalization as 层规范化; this book says 随机失活, 教师强制 and 层归一化. The
term base (locale/zh_CN/terms.yml) names such aliases per concept (`aliases`, "name : index
letter"); in the Chinese edition this extension adds each as one more headword of the concept's
glossary entry, so the alias is on the glossary page, in the search index and in the general
index (under its pinyin initial) and leads to the same definition. In running text an alias
stays a variant that tools/term_report.py flags. The English edition is left as it is.

It runs as a transform after Sphinx's Locale transform has put the Chinese headwords in place
and before the domains collect the terms and index entries.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from docutils import nodes
from sphinx import addnodes
from sphinx.domains.std import make_glossary_term
from sphinx.transforms import SphinxTransform

GLOSSARY = "glossary"
TERMS = Path("locale") / "zh_CN" / "terms.yml"
NOTE = "（另一常见译名）"


def aliases(srcdir: Path) -> dict[str, list[tuple[str, str | None]]]:
    """English glossary term -> [(alias, index letter or None)] from the term base."""
    data = yaml.safe_load((Path(srcdir) / TERMS).read_text(encoding="utf-8"))
    found: dict[str, list[tuple[str, str | None]]] = {}
    for entry in data["terms"]:
        for alias in entry.get("aliases") or []:
            name, _, letter = (part.strip() for part in alias.partition(" : "))
            found.setdefault(entry["english"], []).append((name, letter or None))
    return found


class GlossaryAliases(SphinxTransform):
    """Add the aliases of each glossary term as further headwords (Chinese edition only)."""

    default_priority = 40  # after Locale (20), before the domains collect (SphinxDomains, 850)

    def apply(self, **kwargs) -> None:
        if not (self.config.language or "").startswith("zh") or self.env.docname != GLOSSARY:
            return
        wanted = aliases(Path(self.env.srcdir))
        # the id Sphinx gave each headword, from its English text (term-teacher-forcing)
        by_id = {nodes.make_id(f"term-{english}"): english for english in wanted}
        for glossary in self.document.findall(addnodes.glossary):
            for term in list(glossary.findall(nodes.term)):
                english = next((by_id[i] for i in term["ids"] if i in by_id), None)
                if english is None:
                    continue
                parent = term.parent
                at = parent.index(term) + 1
                for name, letter in wanted.pop(english):
                    alias = make_glossary_term(
                        self.env, [nodes.Text(name)], letter, term.source, term.line, None,
                        self.document,
                    )  # fmt: skip
                    # shown after the alias, not part of it (nor of its index entry)
                    alias.insert(1, nodes.inline("", NOTE, classes=["afz-alias-note"]))
                    alias["classes"].append("afz-alias")
                    parent.insert(at, alias)
                    at += 1
        if wanted:
            raise ValueError(
                f"{TERMS}: aliases for terms the glossary does not have: {sorted(wanted)}"
            )


def setup(app):
    app.add_transform(GlossaryAliases)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
