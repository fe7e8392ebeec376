#!/usr/bin/env python3
"""Prints one closing line, 'N passed, N failed, N skipped', over meson
test logs (JSON lines), so a CI reader sees one verdict for all suites.
Exits 1 when anything failed or nothing ran."""
import json
import sys

passed = failed = skipped = 0
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            r = json.loads(line).get("result")
            if r in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif r == "SKIP":
                skipped += 1
            else:
                failed += 1
print(f"tests: {passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or passed == 0 else 0)
