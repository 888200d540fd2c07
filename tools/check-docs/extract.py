#!/usr/bin/python3
"""The reading half of tools/check-docs.sh: finds the fenced code blocks and
the relative links of Markdown files and writes what the script checks.

    python3 extract.py --root ROOT --out DIR FILE...

Writes into DIR (which must exist):
  blocks.tsv  one line per code block, in document order:
              id, file, line, lang, kind, source, note (separated by the
              unit separator, 0x1f;
              file relative to ROOT when under it; line of the opening
              fence). kind is one of program, fragment, file, run, syntax,
              cmake, text, error; source is the file written for it (a
              directory for cmake); note is the reason of a syntax block or
              the message of an error.
  links.tsv   one line per relative link: file, line, target, status
              (ok or broken), message (separated likewise).
  and the sources: bNNN.c / .cpp / .sh, bNNN/ (a cmake consumer project).

The conventions are those of tools/check-docs.sh's header and
docs/contributing.md. Python's standard library only.
"""

import argparse
import os
import re
import sys
import urllib.parse

LANGS = ("c", "c++", "sh", "cmake", "text")

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
MARKER = re.compile(r"^\s*<!--\s*check:\s*(?P<what>.*?)\s*-->\s*$")
SYNTAX = re.compile(r"^syntax(?:\s*\((?P<reason>.*)\))?$")
MAIN = re.compile(r"\bmain\s*\(")
PREPROC = re.compile(r"^\s*#")


class Block:
    def __init__(self, line, indent, fence, info, marker, marker_line):
        self.line = line  # 1-based line of the opening fence
        self.indent = indent
        self.fence = fence
        self.info = info.strip()
        self.marker = marker  # text after "check:", or None
        self.marker_line = marker_line
        self.body = []  # lines, the fence's indentation removed


def dedent(line, indent):
    """Removes up to len(indent) leading spaces or tabs, as CommonMark
    removes the opening fence's indentation from the content."""
    n = 0
    while n < len(indent) and n < len(line) and line[n] in " \t":
        n += 1
    return line[n:]


def parse(text):
    """Returns (blocks, prose, stray_markers): prose is a list of
    (line number, text) outside code blocks; stray_markers the line
    numbers of check markers that no fence follows."""
    lines = text.split("\n")
    blocks, prose, stray = [], [], []
    pending = None  # (line number, marker text) waiting for its fence
    block = None
    for no, line in enumerate(lines, 1):
        if block is not None:
            m = FENCE.match(line)
            if (
                m
                and m.group("fence")[0] == block.fence[0]
                and len(m.group("fence")) >= len(block.fence)
                and m.group("info").strip() == ""
            ):
                blocks.append(block)
                block = None
            else:
                block.body.append(dedent(line, block.indent))
            continue
        m = FENCE.match(line)
        if m and not (m.group("fence")[0] == "`" and "`" in m.group("info")):
            marker, marker_line = (None, None)
            if pending is not None:
                marker_line, marker = pending
                pending = None
            block = Block(
                no, m.group("indent"), m.group("fence"), m.group("info"),
                marker, marker_line)
            continue
        mm = MARKER.match(line)
        if mm:
            if pending is not None:
                stray.append(pending[0])
            pending = (no, mm.group("what"))
            continue
        if line.strip() and pending is not None:
            stray.append(pending[0])
            pending = None
        prose.append((no, line))
    if pending is not None:
        stray.append(pending[0])
    if block is not None:  # unclosed: CommonMark runs it to the end
        blocks.append(block)
    return blocks, prose, stray


# --- links -------------------------------------------------------------

INLINE_LINK = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*(?P<target><[^>]*>|[^\s)]+)"
    r"(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")
REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(?P<target><[^>]*>|\S+)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(?P<text>.*?)(?:\s+#+)?\s*$")
HTML_ANCHOR = re.compile(r"<a\s[^>]*\b(?:name|id)\s*=\s*[\"']([^\"']+)[\"']",
                         re.I)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def slug(text):
    """GitHub's anchor for a heading: the rendered text, lower case,
    punctuation other than - and _ removed, spaces made hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "").replace("*", "")
    text = re.sub(r"(?<!\w)_+|_+(?!\w)", "", text)  # _emphasis_
    text = text.strip().lower()
    text = "".join(ch for ch in text
                   if ch.isalnum() or ch in " -_")
    return text.replace(" ", "-")


_anchor_cache = {}


def anchors(path):
    if path in _anchor_cache:
        return _anchor_cache[path]
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        _anchor_cache[path] = set()
        return set()
    _, prose, _ = parse(text)
    found, seen = set(), {}
    prev = None
    for _, line in prose:
        m = HEADING.match(line)
        s = None
        if m:
            s = slug(m.group("text"))
        elif prev is not None and prev.strip() and \
                re.match(r"^\s{0,3}(=+|-+)\s*$", line) and \
                not re.match(r"^\s*([-*+]\s|\d+[.)]\s|>|\|)", prev):
            s = slug(prev)  # a setext heading
        if s is not None:
            n = seen.get(s, 0)
            seen[s] = n + 1
            found.add(s if n == 0 else "%s-%d" % (s, n))
        for a in HTML_ANCHOR.findall(line):
            found.add(a)
        prev = line
    _anchor_cache[path] = found
    return found


def check_links(path, shown, prose, out):
    base = os.path.dirname(path)
    for no, line in prose:
        bare = CODE_SPAN.sub("", line)
        targets = [m.group("target") for m in INLINE_LINK.finditer(bare)]
        m = REF_DEF.match(bare)
        if m:
            targets.append(m.group("target"))
        for target in targets:
            if target.startswith("<") and target.endswith(">"):
                target = target[1:-1]
            if not target or SCHEME.match(target) or target.startswith("//"):
                continue  # a URL: not checked here
            file_part, _, anchor = target.partition("#")
            file_part = urllib.parse.unquote(file_part.split("?")[0])
            anchor = urllib.parse.unquote(anchor)
            dest = os.path.normpath(os.path.join(base, file_part)) \
                if file_part else path
            status, msg = "ok", ""
            if not os.path.exists(dest):
                status, msg = "broken", "no such file: %s" % file_part
            elif anchor and dest.endswith(".md") and os.path.isfile(dest):
                if anchor not in anchors(dest):
                    status = "broken"
                    msg = "no heading #%s in %s" % (
                        anchor, file_part or os.path.basename(path))
            out.append((shown, no, target, status, msg))


# --- blocks ------------------------------------------------------------


def c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def fragment_source(block, shown, cxx):
    """Preprocessor lines (with their continuation lines) hoisted to file
    scope, each under a #line naming its place in the Markdown file; the
    rest the body of doc_fragment(), its line numbers kept."""
    first = block.line + 1
    hoisted, body = [], []
    cont = False
    for i, line in enumerate(block.body):
        if cont or PREPROC.match(line):
            if not cont:  # not between a directive's continued lines
                hoisted.append("#line %d %s" % (first + i, c_string(shown)))
            hoisted.append(line)
            cont = line.rstrip().endswith("\\")
            body.append("")
        else:
            body.append(line)
    out = hoisted + [
        "",
        "__attribute__((used)) static void doc_fragment(%s)"
        % ("" if cxx else "void"),
        "{",
        "#line %d %s" % (first, c_string(shown)),
    ] + body + ["}", ""]
    return "\n".join(out)


def program_source(block, shown):
    return "\n".join(
        ["#line %d %s" % (block.line + 1, c_string(shown))] + block.body
        + [""])


CMAKE_MAIN_C = """\
#include <rdl.h>

#include <stdio.h>

int main(void)
{
    printf("rdl %s\\n", rdl_version_string());
    return 0;
}
"""

CMAKE_MAIN_CPP = """\
#include <rdl.hpp>

#include <cstdio>

int main()
{
    std::printf("rdl %s\\n", rdl_version_string());
    return 0;
}
"""

CMAKE_WORD = r"[A-Za-z0-9_.+-]+"


def cmake_project(block, root, outdir):
    """Writes outdir/: CMakeLists.txt (the block, completed), main.c,
    main.cpp, a symlink to ROOT for each add_subdirectory() of a relative
    path, and cmake-args (one -D option a line: FetchContent gets ROOT as
    every declared dependency's source, never the network)."""
    os.makedirs(outdir)
    text = "\n".join(block.body)
    code = re.sub(r"#.*", "", text)  # comments out (best effort)
    made = set(re.findall(
        r"\badd_(?:executable|library)\s*\(\s*(%s)" % CMAKE_WORD, code, re.I))
    used = []
    for name in re.findall(
            r"\b(?:target_\w+|set_target_properties)\s*\(\s*(%s)"
            % CMAKE_WORD, code, re.I):
        if name not in made and "::" not in name and name not in used:
            used.append(name)
    cxx = re.search(r"cxx", code, re.I) is not None
    adds = ["add_executable(%s %s)" % (n, "main.cpp" if cxx else "main.c")
            for n in used]
    head = []
    if not re.search(r"^\s*cmake_minimum_required\s*\(", code, re.M | re.I):
        head.append("cmake_minimum_required(VERSION 3.16)")
    m = re.search(r"^\s*project\s*\([^)]*\)", text, re.M | re.I)
    if m:
        listing = text[:m.end()] + "\n" + "\n".join(adds) + text[m.end():]
        listing = "\n".join(head + [listing])
    else:
        head.append("project(doc_consumer LANGUAGES C CXX)")
        listing = "\n".join(head + adds + [text])
    with open(os.path.join(outdir, "CMakeLists.txt"), "w") as f:
        f.write(listing + "\n")
    with open(os.path.join(outdir, "main.c"), "w") as f:
        f.write(CMAKE_MAIN_C)
    with open(os.path.join(outdir, "main.cpp"), "w") as f:
        f.write(CMAKE_MAIN_CPP)
    for sub in re.findall(r"\badd_subdirectory\s*\(\s*\"?([^\s)\"]+)",
                          code, re.I):
        if "$" in sub or os.path.isabs(sub):
            continue
        link = os.path.normpath(os.path.join(outdir, sub))
        if not link.startswith(outdir + os.sep) or os.path.lexists(link):
            continue
        os.makedirs(os.path.dirname(link), exist_ok=True)
        os.symlink(root, link)
    args = []
    names = re.findall(r"\bFetchContent_Declare\s*\(\s*(%s)" % CMAKE_WORD,
                       code, re.I)
    if names:
        args.append("-DFETCHCONTENT_FULLY_DISCONNECTED=ON")
    for name in names:
        args.append("-DFETCHCONTENT_SOURCE_DIR_%s=%s" % (name.upper(), root))
    with open(os.path.join(outdir, "cmake-args"), "w") as f:
        f.write("".join(a + "\n" for a in args))


def classify(block):
    """Returns (kind, note): what is checked, or an error."""
    lang = block.info
    marker = block.marker
    if lang == "":
        return "error", "unlabelled block (info string: one of %s)" % \
            ", ".join(LANGS)
    if lang not in LANGS:
        return "error", "unknown language '%s' (one of %s)" % (
            lang, ", ".join(LANGS))
    if marker is not None:
        if marker == "file":
            if lang not in ("c", "c++"):
                return "error", "check: file is for c and c++ blocks"
            return "file", ""
        m = SYNTAX.match(marker)
        if m:
            reason = (m.group("reason") or "").strip()
            if lang != "sh":
                return "error", "check: syntax is for sh blocks"
            if not reason:
                return "error", "check: syntax needs a reason: " \
                    "<!-- check: syntax (REASON) -->"
            return "syntax", reason
        return "error", "unknown check marker '<!-- check: %s -->'" % marker
    if lang == "text":
        return "text", ""
    if lang in ("c", "c++"):
        body = "\n".join(block.body)
        return ("program" if MAIN.search(body) else "fragment"), ""
    if lang == "sh":
        return "run", ""
    return "cmake", ""


def tsv(*fields):
    """One record: fields separated by US (0x1f), which bash's read keeps
    apart even when empty (tabs, being blanks, would merge)."""
    return "\x1f".join(str(f).replace("\x1f", " ").replace("\n", " ")
                        for f in fields) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("files", nargs="+")
    opts = ap.parse_args()
    root = os.path.realpath(opts.root)
    out = os.path.realpath(opts.out)

    block_rows, link_rows = [], []
    n = 0
    for name in opts.files:
        path = os.path.realpath(name)
        rel = os.path.relpath(path, root)
        shown = name if rel.startswith("..") else rel
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError) as e:
            block_rows.append(tsv("f%d" % len(block_rows), shown, 0, "-",
                                  "error", "", "cannot read: %s" % e))
            continue
        blocks, prose, stray = parse(text)
        items = [(no, None) for no in stray] + [(b.line, b) for b in blocks]
        for no, block in sorted(items, key=lambda item: item[0]):
            n += 1
            if block is None:
                block_rows.append(tsv("b%03d" % n, shown, no, "marker",
                                      "error", "", "check marker not "
                                      "followed by a code block"))
                continue
            bid = "b%03d" % n
            kind, note = classify(block)
            source = ""
            cxx = block.info == "c++"
            ext = ".cpp" if cxx else ".c"
            if kind == "fragment":
                source = os.path.join(out, bid + ext)
                with open(source, "w") as f:
                    f.write(fragment_source(block, shown, cxx))
            elif kind in ("program", "file"):
                source = os.path.join(out, bid + ext)
                with open(source, "w") as f:
                    f.write(program_source(block, shown))
            elif kind in ("run", "syntax"):
                source = os.path.join(out, bid + ".sh")
                with open(source, "w") as f:
                    f.write("\n".join(block.body) + "\n")
            elif kind == "cmake":
                source = os.path.join(out, bid)
                cmake_project(block, root, source)
            block_rows.append(tsv(bid, shown, block.line,
                                  block.info or "(unlabelled)",
                                  kind, source, note))
        check_links(path, shown, prose, link_rows)

    with open(os.path.join(out, "blocks.tsv"), "w") as f:
        f.writelines(block_rows)
    with open(os.path.join(out, "links.tsv"), "w") as f:
        f.writelines(tsv(*row) for row in link_rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
