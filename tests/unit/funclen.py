#!/usr/bin/env python3
"""funclen.py SOURCE_ROOT ALLOWLIST: no function over 100 lines.

The house style (docs/README.md, "The shape of a function": named steps) puts the
opening and the closing brace of every function at column 0, alone on
its line, and nothing else there: that is what this reads.  A function
runs from the first line of its declarator (where its return type
starts) to its closing brace; its length is that many lines.

Every .c and .h under core/, plugins/ and sdk/ is read.  It fails
  - when a function over LIMIT lines is not in ALLOWLIST ("path name"
    per line, '#' comments): a new long function is written as steps;
  - when a function in ALLOWLIST is no longer over LIMIT, or no longer
    there: the list only shrinks, so take its line out;
  - when a file cannot be read this way (a '{' at column 0 with no '}'
    at column 0 before the next, or a function whose brace is not on a
    line of its own): a length that cannot be measured is not passed.
With --list it prints every function over LIMIT, longest first, and
exits 0 (for the allowlist and for the figures in a report).
"""
import os
import re
import sys

LIMIT = 100
DIRS = ('core', 'plugins', 'sdk')
NAME = re.compile(r'([A-Za-z_]\w*)\s*\(')
# A definition whose '{' ends the declarator's line: not the house style.
INLINE_OPEN = re.compile(r'^[A-Za-z_][\w\s\*]*\b([A-Za-z_]\w*)\s*\([^;]*\)\s*\{\s*$')
KEYWORDS = {'if', 'while', 'for', 'switch', 'return', 'sizeof', 'do', '__attribute__'}


def sources(root):
    for top in DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(('.c', '.h')):
                    yield os.path.join(dirpath, name)


def functions(path, rel):
    """[(name, first line, length)] and [problem] of one file."""
    with open(path, encoding='utf-8', errors='replace') as f:
        lines = f.read().split('\n')
    found, bad = [], []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = INLINE_OPEN.match(line)
        if m and m.group(1) not in KEYWORDS and not line.startswith(('typedef', 'struct', 'enum', 'union')) \
                and '=' not in line:
            bad.append(f'{rel}:{i + 1}: a function whose {{ is not alone at column 0 '
                       '(cannot be measured; write it in the house style)')
        if line.rstrip() != '{':
            i += 1
            continue
        # The declarator: the lines above, back to the one starting at
        # column 0 (continuation lines are indented).
        start = i - 1
        while start > 0 and lines[start] and lines[start][0] in ' \t':
            start -= 1
        decl = ' '.join(lines[start:i])
        end = i + 1
        while end < len(lines) and not lines[end].startswith('}'):
            if lines[end].rstrip() == '{':
                break
            end += 1
        if end >= len(lines) or not lines[end].startswith('}'):
            bad.append(f'{rel}:{i + 1}: a {{ at column 0 with no }} at column 0 before the next')
            i += 1
            continue
        names = [n for n in NAME.findall(decl) if n not in KEYWORDS]
        if ')' in decl and names and not decl.lstrip().startswith(('struct', 'enum', 'union', 'typedef')) \
                and '=' not in decl.split('(')[0]:
            found.append((names[0], start + 1, end - start + 1))
        i = end + 1
    return found, bad


def read_allowlist(path):
    allowed = set()
    with open(path, encoding='utf-8') as f:
        for line in f:
            line = line.split('#', 1)[0].strip()
            if line:
                rel, name = line.split()
                allowed.add((rel, name))
    return allowed


def main():
    args = sys.argv[1:]
    listing = '--list' in args
    args = [a for a in args if a != '--list']
    if len(args) != (1 if listing else 2):
        print('usage: funclen.py SOURCE_ROOT ALLOWLIST | funclen.py --list SOURCE_ROOT',
              file=sys.stderr)
        return 2
    root = args[0]
    long_ones, bad, n = [], [], 0
    for path in sources(root):
        rel = os.path.relpath(path, root)
        found, problems = functions(path, rel)
        bad += problems
        n += len(found)
        long_ones += [(length, rel, name, first) for name, first, length in found
                      if length > LIMIT]
    long_ones.sort(key=lambda t: (-t[0], t[1], t[2]))
    if listing:
        for length, rel, name, first in long_ones:
            print(f'{length:5d} {rel}:{first} {name}')
        print(f'{len(long_ones)} of {n} functions over {LIMIT} lines')
        return 0
    if n == 0:
        print(f'funclen: no function found under {root}; the check would pass without checking')
        return 1
    allowed = read_allowlist(args[1])
    over = {(rel, name): (length, first) for length, rel, name, first in long_ones}
    for (rel, name), (length, first) in sorted(over.items()):
        if (rel, name) not in allowed:
            bad.append(f'{rel}:{first}: {name} is {length} lines (over {LIMIT}): '
                       'split it into named steps')
    for rel, name in sorted(allowed - set(over)):
        bad.append(f'{rel}: {name} is in the allowlist but no longer over {LIMIT} lines '
                   '(or gone): take it out of the list')
    for line in bad:
        print('funclen:', line)
    if bad:
        return 1
    longest = f', the longest {long_ones[0][2]} ({long_ones[0][0]})' if long_ones else ''
    print(f'ok: {n} functions, {len(long_ones)} over {LIMIT} lines, all allowlisted{longest}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
