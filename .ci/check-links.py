#!/usr/bin/env python3
"""Checks every relative link in the repository's Markdown documentation.

Files: README.md, BENCHMARKS.md, RELIABILITY.md (if present) and docs/**/*.md.
Links: Markdown links and images `[text](target)` / `![alt](target)`, and HTML
`<img src="…">` / `<a href="…">`, outside fenced code blocks and inline code.

- http:, https: and mailto: targets are skipped;
- `#anchor` must match a heading of the same file;
- `file.md#anchor` needs the file and a heading with that anchor in it;
- any other target just has to exist.

Anchors follow GitHub's rule: lowercase, spaces become '-', punctuation other than
'-' and '_' is removed; a repeated heading gets '-1', '-2', … appended.

Prints each broken link as `file:line: target` and exits 1, or prints
`links: N checked, all resolve` and exits 0. Standard library only.
"""

import re
import sys
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
INLINE_CODE = re.compile(r"(`+)(.+?)\1")
# [text](target) or ![alt](target); the target may be wrapped in <…> and be followed by
# a "title". Nested brackets one level deep are allowed in the text.
MD_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+\"[^\"]*\")?\s*\)")
HTML_LINK = re.compile(r"<(?:img|a|source)\b[^>]*?\b(?:src|href)\s*=\s*[\"']([^\"']+)[\"']", re.I)


def doc_files():
    files = [ROOT / "README.md", ROOT / "BENCHMARKS.md"]
    if (ROOT / "RELIABILITY.md").exists():
        files.append(ROOT / "RELIABILITY.md")
    files += sorted((ROOT / "docs").rglob("*.md"))
    return [f for f in files if f.exists()]


def lines_outside_fences(text):
    """Yields (line number, line) for lines not inside a fenced code block."""
    fence = None
    for n, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if fence is None:
            if m:
                fence = m.group(1)
                continue
            yield n, line
        elif m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) \
                and line.strip() == m.group(1):
            fence = None


def slug(heading):
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"<[^>]+>", "", heading)                  # inline HTML tags
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)   # links keep their text
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)                     # punctuation, backticks
    return text.replace(" ", "-")


_anchor_cache = {}


def anchors(path):
    if path not in _anchor_cache:
        seen = {}
        result = set()
        for _, line in lines_outside_fences(path.read_text(encoding="utf-8")):
            m = HEADING.match(line)
            if not m:
                continue
            base = slug(m.group(2))
            if base in seen:
                seen[base] += 1
                result.add(f"{base}-{seen[base]}")
            else:
                seen[base] = 0
                result.add(base)
        # Explicit anchors: <a id="…"> / <a name="…">.
        for m in re.finditer(r"<a\s+(?:id|name)\s*=\s*[\"']([^\"']+)[\"']",
                             path.read_text(encoding="utf-8")):
            result.add(m.group(1))
        _anchor_cache[path] = result
    return _anchor_cache[path]


def links(path):
    for n, line in lines_outside_fences(path.read_text(encoding="utf-8")):
        line = INLINE_CODE.sub("", line)
        for m in MD_LINK.finditer(line):
            yield n, m.group(1).strip("<>")
        for m in HTML_LINK.finditer(line):
            yield n, m.group(1)


def check(path, target):
    """Returns True when the link resolves."""
    if re.match(r"^(https?:|mailto:)", target, re.I):
        return True
    file_part, _, anchor = target.partition("#")
    file_part = urllib.parse.unquote(file_part.split("?", 1)[0])
    if file_part:
        if file_part.startswith("/"):
            dest = ROOT / file_part.lstrip("/")
        else:
            dest = (path.parent / file_part).resolve()
        if not dest.exists():
            return False
    else:
        dest = path
    if anchor and dest.is_file() and dest.suffix.lower() == ".md":
        return urllib.parse.unquote(anchor) in anchors(dest)
    return True


def main():
    checked = 0
    broken = []
    for path in doc_files():
        for n, target in links(path):
            if re.match(r"^(https?:|mailto:)", target, re.I):
                continue
            checked += 1
            if not check(path, target):
                broken.append(f"{path.relative_to(ROOT)}:{n}: {target}")
    for b in broken:
        print(b)
    if broken:
        print(f"links: {len(broken)} of {checked} broken", file=sys.stderr)
        return 1
    print(f"links: {checked} checked, all resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main())
