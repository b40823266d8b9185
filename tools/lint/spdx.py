#!/usr/bin/env python3
# SPDX-License-Identifier: BSL-1.0
"""Checks that every source file of the project names its licence.

A source file (C, C++, GLSL, HLSL, CMake, shell, Python, the env table, a
script with a shebang) must carry `SPDX-License-Identifier: BSL-1.0` in its
first three lines. The licence text is LICENSE at the top of the tree.

  spdx.py          check the files git tracks (exit 1 and one line per file without the line)
  spdx.py --add    add the line where it is missing (after a shebang; as a comment of the file's kind)
"""
import argparse
import pathlib
import subprocess
import sys

TAG = "SPDX-License-Identifier: BSL-1.0"
SLASHES = {".cpp", ".hpp", ".def", ".glsl", ".hlsl", ".comp"}
C89 = {".c", ".h"}  # /* */: programs may build the public headers as C89


def comment_for(path: pathlib.Path, first_line: str):
    name = path.name
    if path.suffix in SLASHES:
        return "//"
    if path.suffix in C89:
        return "/*"
    if name == "CMakeLists.txt" or path.suffix in {".cmake", ".sh", ".py"} or first_line.startswith("#!"):
        return "#"
    return None  # not a source file (Markdown, data, images)


def tracked(root: pathlib.Path):
    out = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], check=True, capture_output=True).stdout
    for rel in out.decode().split("\0"):
        if rel:
            yield root / rel


def first_line(p: pathlib.Path):
    try:
        with p.open("rb") as f:
            return f.readline().decode(errors="replace")
    except OSError:
        return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=pathlib.Path, default=pathlib.Path(__file__).resolve().parents[2])
    ap.add_argument("--add", action="store_true")
    a = ap.parse_args()
    missing = []
    for p in tracked(a.root):
        if not p.is_file():
            continue
        c = comment_for(p, first_line(p))
        if not c:
            continue
        text = p.read_text(errors="replace")
        if TAG in "\n".join(text.split("\n")[:3]):
            continue
        if not a.add:
            missing.append(p.relative_to(a.root))
            continue
        lines = text.split("\n")
        at = 1 if lines and lines[0].startswith("#!") else 0
        lines.insert(at, f"/* {TAG} */" if c == "/*" else f"{c} {TAG}")
        p.write_text("\n".join(lines))
    for m in missing:
        print(f"{m}: no '{TAG}' line in its first three lines")
    if missing:
        print(f"spdx: {len(missing)} file(s) without the licence line (tools/lint/spdx.py --add adds it)")
        return 1
    if not a.add:
        print("spdx: every source file names its licence")
    return 0


if __name__ == "__main__":
    sys.exit(main())
