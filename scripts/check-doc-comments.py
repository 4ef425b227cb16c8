#!/usr/bin/env python3
"""Lists public declarations in Sources/ and Examples/ that have no /// doc comment. Exits 1 when any is found."""
import pathlib
import re
import sys

DECLARATION = re.compile(
    r"^\s*(@\w+(\([^)]*\))?\s+)*(public|open)\s+(?!import\b|extension\b)"
    r"((final|static|class|override|mutating|nonisolated|convenience|required|indirect|lazy|weak|unowned)\s+)*"
    r"(func|var|let|struct|class|enum|actor|protocol|typealias|init|subscript|case|associatedtype)\b"
)

missing = []
root = pathlib.Path(__file__).resolve().parent.parent
for path in sorted([*(root / "Sources").rglob("*.swift"), *(root / "Examples").rglob("*.swift")]):
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines):
        if not DECLARATION.match(line):
            continue
        previous = number - 1
        while previous >= 0 and (lines[previous].strip().startswith("@") or lines[previous].strip() == ""):
            if lines[previous].strip() == "":
                break
            previous -= 1
        if previous < 0 or not lines[previous].strip().startswith("///"):
            missing.append(f"{path.relative_to(root)}:{number + 1}: {line.strip()}")

for entry in missing:
    print(entry)
if missing:
    print(f"error: {len(missing)} public declarations without a /// doc comment", file=sys.stderr)
    sys.exit(1)
