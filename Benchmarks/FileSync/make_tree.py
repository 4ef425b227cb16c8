#!/usr/bin/env python3
"""The file tree of Benchmarks/FileSync/rclone-compare.sh, the same bytes on every machine.

  make_tree.py tree DIR [--files 2000] [--large 20] [--folders 40] [--seed 49]
      Writes FILES small files (1-8 KiB each) and LARGE files of 5 MiB, random bytes from SEED, spread
      round-robin over FOLDERS folders (folder-00/small-0000.bin, folder-01/large-01.bin, ...) into DIR,
      which must be empty or missing. Prints the number of files and bytes written.
  make_tree.py edit DIR [DIR...] [--count 10] [--seed 49]
      Rewrites COUNT of the small files, spread evenly over the tree, with new random bytes of another
      size (1-8 KiB), the same new bytes in every DIR. Prints the edited paths.

Edits change each file's size as well as its bytes: a WebDAV remote without modification times (rclone's
vendor "other") compares sizes only, and would not see an edit of the same size.
"""

import argparse
import os
import random
import sys

SMALL_MIN = 1024
SMALL_MAX = 8 * 1024
LARGE_SIZE = 5 * 1024 * 1024


def small_files(directory):
    """The tree's small files under DIRECTORY, sorted, as relative paths."""
    found = []
    for folder, _, names in os.walk(directory):
        for name in names:
            if name.startswith("small-"):
                found.append(os.path.relpath(os.path.join(folder, name), directory))
    return sorted(found)


def make_tree(args):
    if os.path.exists(args.dir) and os.listdir(args.dir):
        sys.exit(f"make_tree: {args.dir} is not empty")
    rng = random.Random(args.seed)
    folders = [f"folder-{index:02d}" for index in range(args.folders)]
    for folder in folders:
        os.makedirs(os.path.join(args.dir, folder), exist_ok=True)
    total = 0
    for index in range(args.files):
        data = rng.randbytes(rng.randint(SMALL_MIN, SMALL_MAX))
        path = os.path.join(args.dir, folders[index % args.folders], f"small-{index:04d}.bin")
        with open(path, "wb") as file:
            file.write(data)
        total += len(data)
    for index in range(args.large):
        data = rng.randbytes(LARGE_SIZE)
        path = os.path.join(args.dir, folders[index % args.folders], f"large-{index:02d}.bin")
        with open(path, "wb") as file:
            file.write(data)
        total += len(data)
    print(f"{args.files + args.large} files, {total} bytes")


def edit_tree(args):
    paths = small_files(args.dirs[0])
    if not paths:
        sys.exit(f"make_tree: no small files in {args.dirs[0]}")
    count = min(args.count, len(paths))
    chosen = [paths[index * len(paths) // count] for index in range(count)]
    rng = random.Random(args.seed * 1000 + 1)
    for path in chosen:
        old_size = os.path.getsize(os.path.join(args.dirs[0], path))
        size = rng.randint(SMALL_MIN, SMALL_MAX)
        if size == old_size:
            size = size + 1 if size < SMALL_MAX else size - 1
        data = rng.randbytes(size)
        for directory in args.dirs:
            with open(os.path.join(directory, path), "wb") as file:
                file.write(data)
        print(path)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    tree = commands.add_parser("tree")
    tree.add_argument("dir")
    tree.add_argument("--files", type=int, default=2000)
    tree.add_argument("--large", type=int, default=20)
    tree.add_argument("--folders", type=int, default=40)
    tree.add_argument("--seed", type=int, default=49)
    edit = commands.add_parser("edit")
    edit.add_argument("dirs", nargs="+")
    edit.add_argument("--count", type=int, default=10)
    edit.add_argument("--seed", type=int, default=49)
    args = parser.parse_args()
    if args.command == "tree":
        if args.folders < 1 or args.files < 0 or args.large < 0:
            sys.exit("make_tree: --folders must be at least 1, --files and --large at least 0")
        make_tree(args)
    else:
        edit_tree(args)


if __name__ == "__main__":
    main()
