#!/usr/bin/env python3
"""plugin_isolation.py PLUGINS_DIR: no plugin includes or links another's code.

A backend is built from its own directory and the SDK (sdk/include and, on
Linux, the support library sdk/linux).  For every pair of plugin directories
A != B under PLUGINS_DIR this fails when:
  - a C file of A includes a header by a path into B ("../B/x.h",
    "plugins/B/x.h"), or by a bare name that only B has;
  - A's meson.build names B's directory (include_directories, files(), a
    path), or a variable that B's meson.build assigns and A does not (a
    dependency, a library, an include path of B's).
Prints one line per violation and exits 1; "ok: N plugins" and exit 0.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
ASSIGN = re.compile(r'^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\+?=)(?!=)', re.M)
WORD = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')


def strip_meson_comments(text):
    out = []
    for line in text.splitlines():
        # a '#' outside a string starts a comment
        quote = None
        for i, ch in enumerate(line):
            if quote:
                if ch == quote:
                    quote = None
            elif ch in "'\"":
                quote = ch
            elif ch == '#':
                line = line[:i]
                break
        out.append(line)
    return '\n'.join(out)


def strip_meson_strings(text):
    return re.sub(r"'(?:[^'\\]|\\.)*'", "''", text)


def files_of(d, exts):
    for root, _, names in os.walk(d):
        for n in sorted(names):
            if n.endswith(exts):
                yield os.path.join(root, n)


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else 'plugins'
    plugins = sorted(p for p in os.listdir(top)
                     if os.path.isdir(os.path.join(top, p)))
    headers = {p: {os.path.basename(f) for f in files_of(os.path.join(top, p), ('.h',))}
               for p in plugins}
    meson = {}
    for p in plugins:
        f = os.path.join(top, p, 'meson.build')
        meson[p] = strip_meson_comments(open(f).read()) if os.path.exists(f) else ''
    assigned = {p: set(ASSIGN.findall(meson[p])) for p in plugins}

    bad = []
    for a in plugins:
        others = [b for b in plugins if b != a]
        for f in files_of(os.path.join(top, a), ('.c', '.h', '.m')):
            rel = os.path.relpath(f, os.path.dirname(top))
            for inc in INCLUDE.findall(open(f, errors='replace').read()):
                parts = inc.replace('\\', '/').split('/')
                base = parts[-1]
                for b in others:
                    if b in parts[:-1]:
                        bad.append(f'{rel}: includes "{inc}" from plugins/{b}')
                    elif len(parts) == 1 and base not in headers[a] and base in headers[b]:
                        bad.append(f'{rel}: includes "{inc}", a header of plugins/{b}')
        if not meson[a]:
            continue
        rel = os.path.join(os.path.basename(top), a, 'meson.build')
        code = strip_meson_strings(meson[a])
        words = set(WORD.findall(code))
        for b in others:
            for s in re.findall(r"'([^']*)'", meson[a]):
                if re.search(r'(^|/)(\.\./)?' + re.escape(b) + r'(/|$)', s) and \
                        ('/' in s or s == '../' + b):
                    bad.append(f"{rel}: names plugins/{b} ('{s}')")
            strings = set(re.findall(r"'([^']*)'", meson[a]))  # is_variable('x')
            for v in sorted((assigned[b] - assigned[a]) & (words | strings)):
                bad.append(f'{rel}: uses {v}, a variable of plugins/{b}/meson.build')

    for line in bad:
        print('FAIL: ' + line)
    if bad:
        print('plugins must share code through the SDK (sdk/include, sdk/linux), '
              'never with each other')
        return 1
    print(f'ok: {len(plugins)} plugins include and link only their own code and the SDK')
    return 0


if __name__ == '__main__':
    sys.exit(main())
