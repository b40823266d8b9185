#!/usr/bin/env python3
# SPDX-License-Identifier: BSL-1.0
"""Checks that the library's layers include only what they may.

The table below is the one statement of the library's layers, bottom to top:
each layer's folder, what it holds, and the layers its files may include
(besides its own). An include names its layer by its first path component
("core/log.hpp", "transports/transport.hpp"); anything else (<...> headers,
the public include/, shaders/, generated headers) is outside the layers.

  layers.py                 check the tree (exit 1 and one line per arrow that runs back up)
  layers.py --markdown      print the table as docs/architecture.md shows it
  layers.py --write-docs    rewrite that table in docs/architecture.md
  layers.py --self-test     check that the check fails on a tree with an upward include

The check also fails when docs/architecture.md's table differs from this one,
when a folder under src/ is in no layer, and when a file includes a header of
the library by a relative path (which would hide the arrow; the public headers
include each other that way, as installed headers must).
"""
import argparse
import pathlib
import re
import shutil
import sys
import tempfile

# (layer, folder, may include, what it holds) — bottom to top.
LAYERS = [
    ("public", "include", [],
     "the public headers (shmem.h, shmemx.h, vkshmem/): they include none of the library's internals"),
    ("core", "src/core", [],
     "the ground: logging and fatal errors, the env table and config, results, waits, the data path's FastState"),
    ("bootstrap", "src/bootstrap", ["core"],
     "PMIx and the singleton: rank, size, node-local peers, allgather, barrier, abort"),
    ("vulkan", "src/vulkan", ["core"],
     "one device per PE: memory import/export, device copies and atomics, kernels"),
    ("transports", "transports", ["core", "bootstrap"],
     "the network transport interface, with shm, UCX and libfabric behind it"),
    ("memory", "src/memory", ["core", "bootstrap", "vulkan"],
     "symmetric heaps and static data, the collective allocator, memfd segments, fd passing"),
    ("rma", "src/rma", ["core", "bootstrap", "vulkan", "transports", "memory"],
     "the data path: put, get, atomics and waits on any PE by its route; active messages"),
    ("coll", "src/coll", ["core", "memory", "rma"],
     "teams and the collective algorithms, written in the data path's operations"),
    ("proxy", "src/proxy", ["core", "vulkan", "memory", "rma"],
     "the proxy thread: serves shaders' requests and the active-message inbox"),
    ("runtime", "src/runtime", ["core", "bootstrap", "vulkan", "transports", "memory", "rma", "coll", "proxy"],
     "Runtime: starts, owns and wires the subsystems; stops them in reverse"),
    ("api", "src/api", ["core", "bootstrap", "vulkan", "transports", "memory", "rma", "coll", "proxy", "runtime"],
     "the C entry points (typed ones generated) and the templates behind them"),
]
SOURCE_SUFFIXES = {".c", ".cpp", ".h", ".hpp", ".def"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
BEGIN, END = "<!-- layers: begin (tools/lint/layers.py --write-docs) -->", "<!-- layers: end -->"


def markdown():
    rows = ["| layer | folder | holds | may include |", "|---|---|---|---|"]
    for name, folder, may, what in LAYERS:
        rows.append(f"| {name} | `{folder}/` | {what} | {', '.join(may) if may else 'nothing else'} |")
    return "\n".join(rows) + "\n"


def check(root: pathlib.Path):
    problems = []
    by_name = {name: (root / folder, set(may)) for name, folder, may, _ in LAYERS}
    known = {(root / folder).resolve() for _, folder, _, _ in LAYERS}
    src = root / "src"
    if src.is_dir():
        for d in sorted(p for p in src.iterdir() if p.is_dir()):
            if d.resolve() not in known:
                problems.append(f"{d.relative_to(root)}/: a folder in no layer: add it to LAYERS in tools/lint/layers.py")
    for name, (folder, may) in by_name.items():
        if not folder.is_dir():
            problems.append(f"{folder.relative_to(root)}/: layer {name}'s folder is missing")
            continue
        for f in sorted(folder.rglob("*")):
            if f.suffix not in SOURCE_SUFFIXES or not f.is_file():
                continue
            text = f.read_text(errors="replace")
            for m in INCLUDE.finditer(text):
                inc = m.group(1)
                line = text.count("\n", 0, m.start()) + 1
                where = f"{f.relative_to(root)}:{line}"
                head = inc.split("/", 1)[0]
                if "/" in inc and head in by_name:
                    if head != name and head not in may:
                        problems.append(f'{where}: layer {name} includes "{inc}" (layer {head}); '
                                        f"{name} may include {', '.join(sorted(may)) or 'nothing else'}")
                elif name != "public" and (f.parent / inc).is_file():
                    problems.append(f'{where}: "{inc}" is included by a relative path: name its layer '
                                    f'("{name}/...")')
    docs = root / "docs" / "architecture.md"
    if docs.is_file():
        text = docs.read_text()
        if BEGIN not in text or END not in text:
            problems.append(f"docs/architecture.md: lacks the layer table (run tools/lint/layers.py --write-docs)")
        elif text.split(BEGIN, 1)[1].split(END, 1)[0].strip() != markdown().strip():
            problems.append("docs/architecture.md: the layer table differs from tools/lint/layers.py "
                            "(run tools/lint/layers.py --write-docs)")
    return problems


def write_docs(root: pathlib.Path):
    docs = root / "docs" / "architecture.md"
    text = docs.read_text()
    if BEGIN not in text or END not in text:
        sys.exit(f"docs/architecture.md: add the two marker lines\n{BEGIN}\n{END}\nwhere the table goes")
    head, rest = text.split(BEGIN, 1)
    docs.write_text(head + BEGIN + "\n" + markdown() + END + rest.split(END, 1)[1])


def self_test(root: pathlib.Path):
    with tempfile.TemporaryDirectory() as tmp:
        t = pathlib.Path(tmp)
        for _, folder, _, _ in LAYERS:
            shutil.copytree(root / folder, t / folder)
        (t / "docs").mkdir()
        shutil.copy(root / "docs" / "architecture.md", t / "docs")
        clean = check(t)
        if clean:
            print("self-test: the copied tree should pass:\n  " + "\n  ".join(clean))
            return 1
        bad = t / "src" / "core" / "upward.hpp"
        bad.write_text('#pragma once\n#include "runtime/runtime.hpp"\n#include "log.hpp"\n')
        found = check(t)
        want = ['src/core/upward.hpp:2: layer core includes "runtime/runtime.hpp"',
                'src/core/upward.hpp:3: "log.hpp" is included by a relative path']
        missing = [w for w in want if not any(p.startswith(w) for p in found)]
        if missing:
            print("self-test: the check missed:\n  " + "\n  ".join(missing))
            return 1
    print("layers self-test: an upward and a relative include are caught")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=pathlib.Path, default=pathlib.Path(__file__).resolve().parents[2])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--markdown", action="store_true")
    g.add_argument("--write-docs", action="store_true")
    g.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.markdown:
        sys.stdout.write(markdown())
        return 0
    if a.write_docs:
        write_docs(a.root)
        return 0
    if a.self_test:
        return self_test(a.root)
    problems = check(a.root)
    for p in problems:
        print(p)
    if problems:
        print(f"layers: {len(problems)} problem(s); the table is in tools/lint/layers.py")
        return 1
    print(f"layers: {len(LAYERS)} layers, every include points down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
