#!/usr/bin/env python3
"""Fails on platform-specific imports and calls in library targets that no `#if` guards.

Anchorage's libraries are written to build on Linux and on Apple's platforms (Package.swift says which
product goes where). CI compiles on Linux only, so this check is the guard for the rest: in every
Swift file of a library target (Sources/*, less the executables and C targets),

- `import FoundationEssentials` / `FoundationInternationalization` (swift-foundation's modules, which
  Apple's SDKs do not have) must sit in an `#if canImport(...)` branch, with `import Foundation` in the
  `#else`;
- `import Glibc`, `Musl`, `Android`, `Darwin`, `WinSDK` must sit in a branch of `#if canImport(...)` or
  `#if os(...)`;
- calls and fields only one C library has (Linux's `st_mtim`, `syncfs`, `epoll_*`, `/proc/…`, a
  `Glibc.`-qualified name; Darwin's `st_mtimespec`) must sit in a branch of `#if os(...)` or
  `#if canImport(...)`.

It also compiles the msgpack-c sources vendored for Apple platforms (Sources/CMsgPack), which no build
here compiles, so that they are known to compile.

Usage: scripts/check-portability.py  (exit status 1 and one line a finding when something is unguarded)
"""

import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Targets that are not libraries: the command-line tool and the crash test's writer run on Linux and macOS
# only and may import Foundation as they like.
EXECUTABLES = {"anchorage", "StoreCrashWriter"}

GUARDED_MODULES = {
    "FoundationEssentials": "canImport",
    "FoundationInternationalization": "canImport",
    "Glibc": "platform",
    "Musl": "platform",
    "Android": "platform",
    "Darwin": "platform",
    "WinSDK": "platform",
}
IMPORT = re.compile(r"^\s*(?:@\w+\s+)*(?:(?:public|package|internal|private|fileprivate)\s+)?import\s+(\w+)")
PLATFORM_ONLY = [
    (re.compile(r"\bst_[amc]tim\b"), "Linux's struct stat field"),
    (re.compile(r"\bst_[amc]timespec\b"), "Darwin's struct stat field"),
    (re.compile(r"\b(?:syncfs|epoll_\w+|inotify_\w+|sched_getaffinity|prctl|statx|renameat2|fallocate|accept4|pipe2)\s*\("),
     "a Linux-only call"),
    (re.compile(r"\bO_TMPFILE\b|\bSOCK_NONBLOCK\b|\bSOCK_CLOEXEC\b"), "a Linux-only constant"),
    (re.compile(r"\"/proc/"), "Linux's /proc"),
    (re.compile(r"\b(?:Glibc|Musl)\.\w+"), "a name qualified with Linux's C library"),
]
CONDITION = re.compile(r"^\s*#(if|elseif)\b(.*)$")


def library_swift_files():
    for target in sorted((ROOT / "Sources").iterdir()):
        if not target.is_dir() or target.name in EXECUTABLES:
            continue
        yield from sorted(target.rglob("*.swift"))


def check_file(path):
    """The findings of one file: (line number, message)."""
    findings = []
    # The conditions of the enclosing #if branches, innermost last.
    branches = []
    in_block_comment = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        stripped = line.strip()
        if in_block_comment:
            if "*/" in stripped:
                in_block_comment = False
            continue
        if stripped.startswith("/*") and "*/" not in stripped:
            in_block_comment = True
            continue
        if stripped.startswith("//"):
            continue
        condition = CONDITION.match(line)
        if condition:
            if condition.group(1) == "if":
                branches.append(condition.group(2))
            elif branches:
                branches[-1] = condition.group(2)
            continue
        if stripped.startswith("#else"):
            if branches:
                branches[-1] = "else of " + branches[-1]
            continue
        if stripped.startswith("#endif"):
            if branches:
                branches.pop()
            continue
        guarded_by_platform = any("canImport(" in b or "os(" in b for b in branches)
        imported = IMPORT.match(line)
        if imported and imported.group(1) in GUARDED_MODULES:
            module = imported.group(1)
            if GUARDED_MODULES[module] == "canImport":
                ok = any(f"canImport({module})" in b and not b.startswith("else of") for b in branches)
                if not ok:
                    findings.append((number, f"`import {module}` outside `#if canImport({module})` (Apple's SDKs have no {module}: import Foundation in the #else)"))
            elif not guarded_by_platform:
                findings.append((number, f"`import {module}` outside an `#if canImport(...)` or `#if os(...)` branch"))
            continue
        code = line.split("//", 1)[0]
        for pattern, what in PLATFORM_ONLY:
            if pattern.search(code) and not guarded_by_platform:
                findings.append((number, f"{what} outside an `#if os(...)` or `#if canImport(...)` branch: {stripped}"))
    return findings


def compile_vendored_msgpack():
    """Compiles each vendored msgpack-c source with the machine's C compiler; the findings, if any."""
    folder = ROOT / "Sources" / "CMsgPack"
    if not folder.is_dir():
        return []
    compiler = shutil.which("clang") or shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return [f"{folder}: no C compiler to check the vendored msgpack-c sources with"]
    findings = []
    with tempfile.TemporaryDirectory() as scratch:
        for source in sorted(folder.rglob("*.c")):
            result = subprocess.run(
                [compiler, "-std=c99", "-Wall", "-Werror", "-Wno-unused-function", "-c", str(source),
                 "-I", str(folder / "include"), "-o", str(pathlib.Path(scratch) / (source.stem + ".o"))],
                capture_output=True, text=True)
            if result.returncode != 0:
                first = (result.stderr.strip().splitlines() or ["failed"])[0]
                findings.append(f"{source.relative_to(ROOT)}: does not compile: {first}")
    return findings


def main():
    problems = []
    for path in library_swift_files():
        for number, message in check_file(path):
            problems.append(f"{path.relative_to(ROOT)}:{number}: {message}")
    problems += compile_vendored_msgpack()
    for problem in problems:
        print(problem)
    if problems:
        print(f"error: {len(problems)} platform-specific line(s) unguarded in library targets (README.md, Platforms)")
        return 1
    print("ok: every platform-specific import and call in the library targets is guarded")
    return 0


if __name__ == "__main__":
    sys.exit(main())
