#!/usr/bin/env python3
"""cycles.py SOURCE_ROOT BUILD_ROOT: no call cycle between two files.

A call cycle between files (a.c calls b.c, which calls back into a.c)
makes two files one module in all but name: neither can be read, tested
or moved alone.  Within one file recursion is fine; across files it is
not (docs/README.md, "The core's folders").

The graph is read from the built objects with nm, so it sees every call
the linker resolves, including those through a declaration written by
hand:
  - the core: the static library core/libkgcore.a (its members are named
    after the source's path, '/' turned into '_': base_error.c.o);
  - the SDK and the plugins: the objects meson keeps beside each target
    (BUILD_ROOT/sdk/*/*.p, BUILD_ROOT/plugins/*/*.p), each kept only while
    its source still exists, so that an object left behind by a removed
    file cannot make or hide a cycle.
A symbol a file uses is resolved first among the objects of its own
target, then among the libraries (core, SDK): the plugins each define
the same entry point, and a plugin's call never lands in another plugin.
Every strongly connected set of two or more files is a cycle; each is
printed with one symbol per edge, and the script exits 1.  "ok: ..." and
exit 0 otherwise.  Finding no object at all fails: the check would pass
without checking.
"""
import glob
import os
import re
import subprocess
import sys

CORE_MEMBER = re.compile(r'^([a-z]+)_(.+\.c)\.o$')


def nm(path):
    out = subprocess.run(['nm', '-A', path], check=True, capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        head, _, rest = line.rpartition(':')
        parts = rest.split()
        if len(parts) < 2:
            continue
        member = head.rpartition(':')[2] if ':' in head else head
        yield os.path.basename(member), parts[-2], parts[-1]


def core_objects(src, build):
    """[(group, file, kind, sym)] of the core's static library."""
    lib = os.path.join(build, 'core', 'libkgcore.a')
    rows = []
    if not os.path.exists(lib):
        return rows
    for member, kind, sym in nm(lib):
        m = CORE_MEMBER.match(member)
        if not m:
            continue
        rel = os.path.join('core', m.group(1), m.group(2))
        if os.path.exists(os.path.join(src, rel)):
            rows.append(('core', rel, kind, sym))
    return rows


def target_objects(src, build, top):
    """[(group, file, kind, sym)] of every target under BUILD/top/*/."""
    rows = []
    for pdir in sorted(glob.glob(os.path.join(build, top, '*', '*.p'))):
        sub = os.path.relpath(os.path.dirname(pdir), build)
        target = os.path.basename(pdir)
        # A plugin's module and its internal static library are one plugin.
        group = sub if top == 'plugins' and target.endswith(('.so.p', '.a.p', '.dylib.p')) \
            else f'{sub}/{target}'
        if top == 'sdk' and target.startswith('lib'):
            group = 'sdk'
        for obj in sorted(glob.glob(os.path.join(pdir, '*.c.o'))):
            rel = os.path.join(sub, os.path.basename(obj)[:-2])
            if not os.path.exists(os.path.join(src, rel)):
                continue
            for _, kind, sym in nm(obj):
                rows.append((group, rel, kind, sym))
    return rows


def graph(rows):
    """{file: {file: symbol}} from the nm rows."""
    defined = {}  # group -> sym -> file
    for group, rel, kind, sym in rows:
        if kind in 'TDBRVW':
            defined.setdefault(group, {}).setdefault(sym, rel)
    libs = [g for g in ('core', 'sdk') if g in defined]
    edges = {}
    for group, rel, kind, sym in rows:
        edges.setdefault(rel, {})
        if kind != 'U':
            continue
        for g in [group] + libs:
            target = defined.get(g, {}).get(sym)
            if target:
                if target != rel:
                    edges[rel].setdefault(target, sym)
                break
    return edges


def sccs(edges):
    """Tarjan's strongly connected components, iteratively."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in edges:
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(edges[nxt]))))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    n = stack.pop()
                    on.discard(n)
                    comp.append(n)
                    if n == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def main():
    if len(sys.argv) != 3:
        print('usage: cycles.py SOURCE_ROOT BUILD_ROOT', file=sys.stderr)
        return 2
    src, build = sys.argv[1], sys.argv[2]
    rows = core_objects(src, build) + target_objects(src, build, 'sdk') + \
        target_objects(src, build, 'plugins')
    edges = graph(rows)
    if not edges:
        print(f'cycles: no object found under {build}; the check would pass without checking')
        return 1
    comps = sccs(edges)
    for comp in comps:
        print('cycles: these files call one another: ' + ', '.join(comp))
        members = set(comp)
        for a in comp:
            for b, sym in sorted(edges[a].items()):
                if b in members:
                    print(f'cycles:   {a} -> {b} ({sym})')
    if comps:
        return 1
    n_edges = sum(len(v) for v in edges.values())
    print(f'ok: {len(edges)} files, {n_edges} calls between files, no cycle')
    return 0


if __name__ == '__main__':
    sys.exit(main())
