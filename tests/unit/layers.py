#!/usr/bin/env python3
"""layers.py CORE_DIR LIBKGCORE: the core's layers point only downward.

core/ holds one folder per subsystem, in layers (docs/README.md, "The
core's folders"):

    0  base, os
    1  denylist, protect, output, audit
    2  policy
    3  plugins
    4  supervise
    5  cli

A file may use its own folder and any folder of a lower layer; never a
folder of its own layer or a higher one.  Two things are checked:
  - includes: every '#include "x.h"' of a file under CORE_DIR names a
    header that lives in such a folder (or is not a core header at all:
    the SDK's, the generated kgate-config.h);
  - calls: every symbol an object of LIBKGCORE (the built static library,
    read with nm) uses and another of its objects defines is defined in
    such a folder.  This catches a declaration written by hand, which the
    include check cannot see.
A folder under CORE_DIR that the table does not name fails too: a new
subsystem must be given its layer.
Prints one line per violation and exits 1; "ok: ..." and exit 0.
"""
import os
import re
import subprocess
import sys

LAYER = {
    'base': 0, 'os': 0,
    'denylist': 1, 'protect': 1, 'output': 1, 'audit': 1,
    'policy': 2,
    'plugins': 3,
    'supervise': 4,
    'cli': 5,
}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
# meson names a static library's objects after the source's path below
# the library's directory, '/' turned into '_': base_error.c.o.
MEMBER = re.compile(r'^(?:.*/)?(' + '|'.join(LAYER) + r')_[^/]+\.c\.o$')


def allowed(user, used):
    return used == user or LAYER[used] < LAYER[user]


def core_files(core):
    """{relative path: folder} of every .c and .h under core."""
    files = {}
    bad = []
    for entry in sorted(os.listdir(core)):
        path = os.path.join(core, entry)
        if not os.path.isdir(path):
            continue
        if entry not in LAYER:
            bad.append(f'{entry}/: a folder of the core with no layer in layers.py')
            continue
        for name in sorted(os.listdir(path)):
            if name.endswith(('.c', '.h')):
                files[os.path.join(entry, name)] = entry
    loose = [n for n in os.listdir(core) if n.endswith(('.c', '.h'))]
    bad += [f'{n}: a core file outside every subsystem folder' for n in sorted(loose)]
    return files, bad


def check_includes(core, files):
    header_folder = {}
    for rel, folder in files.items():
        if rel.endswith('.h'):
            header_folder[os.path.basename(rel)] = folder
    bad, n = [], 0
    for rel, folder in files.items():
        with open(os.path.join(core, rel), encoding='utf-8') as f:
            text = f.read()
        for inc in INCLUDE.findall(text):
            used = header_folder.get(os.path.basename(inc))
            if used is None:
                continue
            n += 1
            if not allowed(folder, used):
                bad.append(f'{rel}: includes {inc} from {used}/ '
                           f'(layer {LAYER[used]}), above {folder}/ (layer {LAYER[folder]})')
    return bad, n


def nm_symbols(lib):
    out = subprocess.run(['nm', '-A', lib], check=True, capture_output=True,
                         text=True).stdout
    defined, used = {}, []
    for line in out.splitlines():
        # "lib.a:lib.a.p/base_error.c.o:0000 T kg_err_set" or "...:   U x"
        head, _, rest = line.rpartition(':')
        member = head.rpartition(':')[2] if ':' in head else head
        parts = rest.split()
        if len(parts) < 2:
            continue
        kind, sym = parts[-2], parts[-1]
        m = MEMBER.match(member)
        if not m:
            continue
        if kind == 'U':
            used.append((member, m.group(1), sym))
        elif kind in 'TDBR':
            defined[sym] = (member, m.group(1))
    return defined, used


def check_calls(lib):
    defined, used = nm_symbols(lib)
    if not defined:
        return [f'{lib}: nm found no symbol of a core object; '
                'the check would pass without checking'], 0
    bad, n = [], 0
    for member, folder, sym in used:
        if sym not in defined:
            continue
        n += 1
        dmember, dfolder = defined[sym]
        if not allowed(folder, dfolder):
            bad.append(f'{os.path.basename(member)}: uses {sym} of '
                       f'{os.path.basename(dmember)} in {dfolder}/ (layer {LAYER[dfolder]}), '
                       f'above {folder}/ (layer {LAYER[folder]})')
    return bad, n


def main():
    if len(sys.argv) != 3:
        print('usage: layers.py CORE_DIR LIBKGCORE', file=sys.stderr)
        return 2
    core, lib = sys.argv[1], sys.argv[2]
    files, bad = core_files(core)
    inc_bad, n_inc = check_includes(core, files)
    call_bad, n_calls = check_calls(lib)
    bad += inc_bad + call_bad
    for line in bad:
        print('layers:', line)
    if bad:
        return 1
    print(f'ok: {len(files)} files in {len(LAYER)} folders, '
          f'{n_inc} includes and {n_calls} calls between core files point down or stay')
    return 0


if __name__ == '__main__':
    sys.exit(main())
