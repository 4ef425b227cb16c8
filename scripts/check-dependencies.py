#!/usr/bin/env python3
"""Checks that every Swift target of a package depends on exactly the modules its Swift files import.

For each target of the package's manifest (read with `swift package dump-package`), the declared
dependencies — targets of the package, and products of its dependencies — are compared with the
modules the target's Swift files import. It fails, listing every mismatch, when

  - a file imports a module of the package or of one of its dependencies that the target does not
    declare (it builds only because another dependency brought the module along), or
  - the target declares a dependency none of whose modules any of its files imports (the dependency
    is linked into every app that uses the target, for nothing).

What counts as an import: `import X`, `@testable import X`, `@_exported import X`, `public`/`package`/
`internal`/`fileprivate`/`private import X`, `import struct X.Y` and `import X.Sub` (module X), also
inside `#if` blocks — a conditional import still needs its dependency declared (declare it with a
`condition:` when only some platforms have it). Imports in comments and string literals (Python or
shell programs in a test's multi-line string) do not count. Modules that are neither targets of the
package nor of its dependencies (Foundation, Glibc, Synchronization, Testing, …) come with the
toolchain and are not checked.

A declared product counts as used when any module of the product is imported, or a module one of
its modules re-exports (`@_exported import`); a product's name need not be its module's (GRDB.swift's
product `GRDB-dynamic` is module `GRDB`). A dependency on an executable target is a tool the target
runs (a test starting `anchorage`), so it needs no import; C targets and plugins are not checked.

    scripts/check-dependencies.py                          # the package in the current folder
    scripts/check-dependencies.py --package-path Benchmarks
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

# Scratch folder for `swift package dump-package`, so that it never waits for the lock of a build
# running in the package's own `.build`.
SCRATCH = Path(tempfile.gettempdir()) / "anchorage-check-dependencies"


def dump_package(package: Path) -> dict:
    """The manifest of the package at `package` as JSON."""
    scratch = SCRATCH / re.sub(r"[^A-Za-z0-9]+", "-", str(package.resolve()))
    result = subprocess.run(
        ["swift", "package", "--package-path", str(package), "--scratch-path", str(scratch), "dump-package"],
        capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"swift package dump-package failed for {package}:\n{result.stderr}")
    return json.loads(result.stdout)


# MARK: Reading Swift files


def code_only(text: str) -> str:
    """`text` with comments and string literals blanked out (newlines kept, so lines still start where they did)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            i = end
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"' or (c == "#" and re.match(r'#+"', text[i:])):
            hashes = len(re.match(r"#*", text[i:]).group(0))
            j = i + hashes
            multiline = text.startswith('"""', j)
            quote = '"""' if multiline else '"'
            closing = quote + "#" * hashes
            j += len(quote)
            while j < n:
                if text.startswith(closing, j):
                    j += len(closing)
                    break
                if hashes == 0 and text[j] == "\\":
                    j += 2
                    continue
                if not multiline and text[j] == "\n":
                    break
                j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


IMPORT = re.compile(
    r"^[ \t]*(?:@[A-Za-z_]+(?:\([^)\n]*\))?[ \t]+)*"
    r"(?:(?:public|package|internal|fileprivate|private)[ \t]+)?"
    r"import[ \t]+(?:(?:typealias|struct|class|enum|protocol|let|var|func|actor)[ \t]+)?"
    r"([A-Za-z_][A-Za-z_0-9]*)",
    re.MULTILINE)
EXPORTED = re.compile(r"^[ \t]*@_exported[ \t]+(?:(?:public|package|internal)[ \t]+)?import[ \t]+"
                      r"(?:(?:typealias|struct|class|enum|protocol|let|var|func)[ \t]+)?([A-Za-z_][A-Za-z_0-9]*)",
                      re.MULTILINE)


def swift_files(folder: Path, excluded: list[Path]) -> list[Path]:
    """The Swift files under `folder`, less those under `excluded`."""
    files = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in names:
            path = Path(root) / name
            if name.endswith(".swift") and not any(path == e or e in path.parents for e in excluded):
                files.append(path)
    return sorted(files)


def imports_of(files: list[Path]) -> dict[str, list[Path]]:
    """Each module the files import, with the files that import it."""
    found: dict[str, list[Path]] = {}
    for path in files:
        for module in set(IMPORT.findall(code_only(path.read_text(encoding="utf-8", errors="replace")))):
            found.setdefault(module, []).append(path)
    return found


def reexports_of(files: list[Path]) -> set[str]:
    """The modules the files re-export (`@_exported import`)."""
    modules: set[str] = set()
    for path in files:
        modules |= set(EXPORTED.findall(code_only(path.read_text(encoding="utf-8", errors="replace"))))
    return modules


# MARK: The package and its dependencies


def target_folder(package: Path, target: dict) -> Path:
    if target.get("path"):
        return package / target["path"]
    kind = target["type"]
    for folder in (["Tests"] if kind == "test" else ["Plugins"] if kind == "plugin" else ["Sources", "Source", "src", "srcs"]):
        if (package / folder / target["name"]).is_dir():
            return package / folder / target["name"]
    return package / "Sources" / target["name"]


class Package:
    """A package's targets (module name → folder, type) and products (name → modules)."""

    def __init__(self, root: Path, manifest: dict):
        self.root = root
        self.manifest = manifest
        self.targets = {t["name"]: t for t in manifest["targets"]}
        self.products = {p["name"]: list(p["targets"]) for p in manifest["products"]}

    def folder(self, name: str) -> Path:
        return target_folder(self.root, self.targets[name])

    def files(self, name: str) -> list[Path]:
        target = self.targets[name]
        folder = self.folder(name)
        return swift_files(folder, [folder / e for e in target.get("exclude", [])])

    def product_modules(self, product: str) -> list[str]:
        """The modules a product makes importable: its targets (those of an automatic product of the same name)."""
        if product in self.products:
            return self.products[product]
        return [product] if product in self.targets else []


def checkout_folders(package: Path) -> dict[str, Path]:
    """The folders of the package's resolved dependencies, by identity (lower-cased)."""
    state = package / ".build" / "workspace-state.json"
    folders: dict[str, Path] = {}
    if state.exists():
        for dependency in json.loads(state.read_text())["object"]["dependencies"]:
            identity = dependency["packageRef"]["identity"].lower()
            kind = dependency.get("state", {}).get("name")
            location = dependency["packageRef"].get("location", "")
            if kind in ("fileSystem", "local") or dependency["packageRef"].get("kind") in ("fileSystem", "root"):
                folders[identity] = Path(location)
            elif dependency.get("subpath"):
                for base in ("checkouts", "repositories"):
                    if (package / ".build" / base / dependency["subpath"]).is_dir():
                        folders[identity] = package / ".build" / base / dependency["subpath"]
                        break
    return folders


def dependency_identity(dependency: dict) -> tuple[str, str | None]:
    """A manifest dependency's identity (lower-cased) and, for a local one, its path."""
    kind, details = next(iter(dependency.items()))
    details = details[0]
    identity = details.get("identity") or details.get("nameForTargetDependencyResolutionOnly") or ""
    path = details.get("path") if kind == "fileSystem" else None
    return identity.lower(), path


def load_dependencies(package: Path, manifest: dict) -> dict[str, Package]:
    """Every direct dependency's manifest, by identity and by name, read in parallel."""
    checkouts = checkout_folders(package)
    wanted: dict[str, Path] = {}
    names: dict[str, str] = {}
    for dependency in manifest["dependencies"]:
        identity, path = dependency_identity(dependency)
        details = next(iter(dependency.values()))[0]
        name = details.get("nameForTargetDependencyResolutionOnly")
        folder = (package / path) if path else checkouts.get(identity)
        if folder is None:
            # Not resolved yet: `swift package resolve` first, or products are taken as their modules' names.
            print(f"note: {identity} is not resolved in {package}/.build; its products are taken to be modules of "
                  "the same name", file=sys.stderr)
            continue
        wanted[identity] = folder
        if name:
            names[name.lower()] = identity
    with ThreadPoolExecutor(max_workers=8) as pool:
        manifests = dict(zip(wanted, pool.map(dump_package, wanted.values())))
    loaded = {identity: Package(wanted[identity], manifests[identity]) for identity in wanted}
    for identity, loaded_package in list(loaded.items()):
        names.setdefault(loaded_package.manifest["name"].lower(), identity)
    for name, identity in names.items():
        loaded.setdefault(name, loaded[identity])
    return loaded


# MARK: The check


def check(package_path: Path) -> list[str]:
    manifest = dump_package(package_path)
    root = Package(package_path, manifest)
    dependencies = load_dependencies(package_path, manifest)

    # Every module of the package graph: importing one of them needs a declaration. The direct
    # dependencies' targets, and the source folders of every package resolved in this package's
    # `.build` or a local dependency's (modules that only a dependency's dependency brings).
    known: set[str] = set(root.targets)
    for dependency in dependencies.values():
        known |= set(dependency.targets)
    graph_roots = [package_path] + [d.root for d in dependencies.values() if (d.root / "Package.swift").exists()]
    for graph_root in graph_roots:
        for folder in checkout_folders(graph_root).values():
            sources = folder / "Sources"
            if sources.is_dir():
                known |= {child.name for child in sources.iterdir() if child.is_dir()}

    reexport_cache: dict[tuple[str, str], set[str]] = {}

    def reexports(owner: Package, module: str) -> set[str]:
        key = (str(owner.root), module)
        if key not in reexport_cache:
            reexport_cache[key] = set()
            if module in owner.targets and owner.folder(module).is_dir():
                reexport_cache[key] = reexports_of(owner.files(module))
        return reexport_cache[key]

    problems: list[str] = []
    for name, target in sorted(root.targets.items()):
        if target["type"] not in ("regular", "executable", "test"):
            continue
        files = root.files(name)
        if not files:
            continue  # a C target
        imported = imports_of(files)
        declared: list[tuple[str, list[str], Package, bool]] = []  # (label, modules, owner, is a tool)
        for dependency in target["dependencies"]:
            kind, details = next(iter(dependency.items()))
            if kind == "product":
                product, package_name = details[0], (details[1] or "").lower()
                owner = dependencies.get(package_name)
                modules = owner.product_modules(product) if owner else [product]
                declared.append((f'product "{product}" ({details[1]})', modules or [product], owner or root, False))
            else:
                dep_name = details[0]
                if dep_name in root.targets:
                    tool = root.targets[dep_name]["type"] in ("executable", "plugin")
                    declared.append((f'target "{dep_name}"', [dep_name], root, tool))
                else:
                    owner = next((d for d in dependencies.values() if dep_name in d.products), None)
                    modules = owner.product_modules(dep_name) if owner else [dep_name]
                    declared.append((f'product "{dep_name}"', modules, owner or root, False))

        provided: dict[str, str] = {}  # module → the declaration that makes it importable
        for label, modules, owner, tool in declared:
            for module in modules:
                provided.setdefault(module, label)
                for exported in reexports(owner, module):
                    provided.setdefault(exported, label)

        used_labels: set[str] = set()
        for module, importers in sorted(imported.items()):
            if module == name:
                continue
            if module in provided:
                used_labels.add(provided[module])
            elif module in known:
                where = ", ".join(str(p.relative_to(package_path)) for p in importers[:3])
                more = f" and {len(importers) - 3} more" if len(importers) > 3 else ""
                problems.append(f"{name}: imports {module} without declaring it ({where}{more})")
        for label, modules, owner, tool in declared:
            if not tool and label not in used_labels and not any(m in imported for m in modules):
                problems.append(f"{name}: declares {label} but no file imports "
                                f"{' or '.join(modules) if len(modules) > 1 else modules[0]}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--package-path", default=".", help="the package's folder (default: the current one)")
    arguments = parser.parse_args()
    package_path = Path(arguments.package_path).resolve()
    try:
        problems = check(package_path)
    except RuntimeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if problems:
        print(f"error: targets of {package_path / 'Package.swift'} whose dependencies are not what they import:")
        for problem in problems:
            print(f"  {problem}")
        return 1
    print(f"ok: every Swift target of {package_path.name} depends on exactly what it imports")
    return 0


if __name__ == "__main__":
    sys.exit(main())
