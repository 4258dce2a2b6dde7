#!/usr/bin/env python3
"""Every relative link in README.md and docs/**/*.md resolves (CTest test
docs_links): the file exists, and a #fragment names a heading of that file
as GitHub makes anchors (lower case, punctuation but '-' and '_' dropped,
spaces to '-'). External links (http, mailto) are not followed. And every
docs/**/*.md can be reached from README.md by following links (no page
nobody can find).
Usage: docs_links.py SOURCE_DIR"""
import os
import re
import sys

LINK = re.compile(r'\[[^\]]*\]\(([^)\s]+)\)')


def anchors(path):
    out, fence = set(), False
    for line in open(path, encoding='utf-8'):
        if line.startswith('```'):
            fence = not fence
        if fence or not line.startswith('#'):
            continue
        text = line.lstrip('#').strip().lower()
        slug = re.sub(r'[^\w\- ]', '', text).replace(' ', '-')
        base, n = slug, 1
        while slug in out:
            slug, n = '%s-%d' % (base, n), n + 1
        out.add(slug)
    return out


def main(src):
    files = [os.path.join(src, 'README.md')]
    for root, _, names in os.walk(os.path.join(src, 'docs')):
        files += [os.path.join(root, n) for n in sorted(names) if n.endswith('.md')]
    files = [os.path.normpath(f) for f in files]
    bad = 0
    links = {}           # file -> the .md files it links to
    for f in files:
        links[f] = set()
        fence = False
        for no, line in enumerate(open(f, encoding='utf-8'), 1):
            if line.startswith('```'):
                fence = not fence
            if fence:
                continue
            for target in LINK.findall(line):
                if re.match(r'[a-z]+:', target):
                    continue
                path, _, frag = target.partition('#')
                full = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
                rel = os.path.relpath(f, src)
                if full.endswith('.md'):
                    links[f].add(full)
                if not os.path.exists(full):
                    print('FAIL  %s:%d: %s: no such file' % (rel, no, target))
                    bad += 1
                elif frag and full.endswith('.md') and frag not in anchors(full):
                    print('FAIL  %s:%d: %s: no heading with that anchor' % (rel, no, target))
                    bad += 1
    seen, todo = set(), [files[0]]
    while todo:
        f = todo.pop()
        if f not in seen:
            seen.add(f)
            todo += [t for t in links.get(f, ()) if t in links]
    for f in files:
        if f not in seen:
            print('FAIL  %s: no link from README.md leads to it' % os.path.relpath(f, src))
            bad += 1
    print('%d files, %s' % (len(files), '%d problems' % bad if bad else 'every link resolves, every page reachable'))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1]))
