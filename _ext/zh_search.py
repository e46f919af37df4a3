"""Sphinx extension: search that finds Chinese words in the Chinese edition.

Chinese is written without spaces, so both sides of a search must cut text into words:

- **the index** (at build time): Sphinx's own Chinese support (`html_search_language = "zh"`)
  segments each page with jieba; this subclass also teaches jieba the course's terms (the
  `chinese` entries of `locale/zh_CN/terms.yml`, e.g. 缩放点积注意力, 层归一化), so a term is
  indexed whole as well as in its parts, and it keeps one-character words (猫, 头), which
  Sphinx's class drops;
- **the query** (in the reader's browser, which has no jieba): Sphinx would look a typed run of
  characters such as 多头注意力的掩码 up as one word and find nothing. The `splitQuery` below cuts
  each run of Chinese characters by longest match against the words of the index itself,
  and leaves out single characters the index does not have. Other text is split as Sphinx
  splits it.

Function words (的, 了, 和, 是 ...) are stop words: neither indexed nor looked up, as English
stop words are.

It changes nothing in the English edition (it only replaces the search language "zh").
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from sphinx.search.zh import SearchChinese

TERMS = Path(__file__).resolve().parent.parent / "locale" / "zh_CN" / "terms.yml"
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
CHINESE_STOPWORDS = set("的地得了着过和与及或是在把被将对从为也都就而之其这那个你它")

SPLIT_QUERY_JS = r"""
function splitQuery(query) {
  const han = /\p{Script=Han}/u;
  const index = (typeof Search !== "undefined" && Search._index) ? Search._index : null;
  const known = (word) =>
    index !== null && (word in index.terms || word in index.titleterms);
  const words = [];
  for (const part of query.split(/[^\p{Letter}\p{Number}_\p{Emoji_Presentation}]+/gu)) {
    if (!part) continue;
    for (const run of part.match(/\p{Script=Han}+|[^\p{Script=Han}]+/gu)) {
      if (!han.test(run) || index === null) {
        words.push(run);
        continue;
      }
      let start = 0;
      while (start < run.length) {  // longest word of the index that starts here
        let end = run.length;
        while (end > start + 1 && !known(run.slice(start, end))) end--;
        const word = run.slice(start, end);
        if (word.length > 1 || known(word)) words.push(word);
        start = end;
      }
    }
  }
  return words;
}
"""


def course_terms(path: Path = TERMS) -> list[str]:
    """The Chinese terms of the term base (empty when there is none)."""
    if not path.exists():
        return []
    import yaml

    entries = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    if isinstance(entries, dict):  # {"terms": [...]} or {english: {...}}
        entries = entries.get("terms", list(entries.values()))
    return sorted({str(e["chinese"]) for e in entries if isinstance(e, dict) and e.get("chinese")})


class SearchCourseChinese(SearchChinese):
    """Sphinx's Chinese search language, with the course's terms and one-character words."""

    js_splitter_code = SPLIT_QUERY_JS
    stopwords = SearchChinese.stopwords | CHINESE_STOPWORDS

    def init(self, options: dict[str, str]) -> None:
        super().init(options)
        import jieba

        jieba.setLogLevel(logging.WARNING)  # not "Building prefix dict ..." on every build
        for term in course_terms(TERMS):
            for word in re.split(r"[/、，,;；\s]+", term):
                if HAN.search(word):
                    jieba.add_word(word)

    def word_filter(self, stemmed_word: str) -> bool:
        if stemmed_word in self.stopwords:
            return False
        return len(stemmed_word) > 1 or bool(HAN.fullmatch(stemmed_word))


def setup(app):
    app.add_search_language(SearchCourseChinese)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
