#!/usr/bin/env python3
"""Fails when a third-party crate gets different cargo features, or the
manifests different dev profiles, in the builds CI runs: the workspace
(tests included), the Python package with and without its `dist` feature,
crates/anydev-dist, and the simulator on its own.

Cargo compiles a crate once per feature set, and everything that depends on
it with it, so one diverging crate such as `syn` or `serde` costs a whole
extra build of the project. crates/anydev-workspace-hack turns on the union
of the features; this check says what to add there when a dependency
change breaks that. The project's own crates are left out: their features
differ on purpose (the Python package does not ship the conformance cases),
and they are cheap to compile again.
"""

import collections
import subprocess
import sys
import tomllib

# Each build as CI runs it: what it selects, and whether it builds tests
# (whose dev-dependencies add features).
BUILDS = {
    "workspace": (["--workspace"], True),
    # The Python and distributed scripts build the simulator on its own.
    "simulator": (["-p", "anydev-sim"], False),
    "python": (["--manifest-path", "crates/anydev-python/Cargo.toml"], False),
    "python --features dist": (["--manifest-path", "crates/anydev-python/Cargo.toml", "--features", "dist"], False),
    "anydev-dist": (["--manifest-path", "crates/anydev-dist/Cargo.toml"], True),
}


def features(build_args, edges):
    """Feature sets per registry crate ("name vX.Y.Z"), as `cargo tree` prints them."""
    run = subprocess.run(
        ["cargo", "tree", "--locked", "--prefix", "none", "--format", "{p}|{f}", "--edges", edges]
        + build_args,
        capture_output=True,
        text=True,
    )
    if run.returncode != 0:
        sys.exit(f"cargo tree {' '.join(build_args)} failed:\n{run.stderr}")
    out = run.stdout
    found = collections.defaultdict(set)
    for line in out.splitlines():
        package, _, feature_list = line.replace(" (*)", "").partition("|")
        if "(/" in package:  # a path crate: one of the project's own
            continue
        found[package.split(" (")[0]].add(feature_list)
    return found


def sides(build_args, tests):
    """The crates compiled for the target and those compiled for the host
    (proc-macros, build scripts and their dependencies); cargo resolves the
    two apart."""
    dev = ",dev" if tests else ""
    target = features(build_args, f"normal{dev},no-proc-macro")
    every = features(build_args, f"normal,build{dev}")
    host = {p: fs - target.get(p, set()) for p, fs in every.items()}
    return {"target": target, "host": {p: fs for p, fs in host.items() if fs}}


def dev_profile(args):
    """The dev profile of the manifest a build uses."""
    manifest = args[args.index("--manifest-path") + 1] if "--manifest-path" in args else "Cargo.toml"
    with open(manifest, "rb") as f:
        return tomllib.load(f).get("profile", {}).get("dev", {})


def main():
    graphs = {name: sides(*build) for name, build in BUILDS.items()}
    problems = []
    profiles = {name: dev_profile(args) for name, (args, _) in BUILDS.items()}
    if len({repr(p) for p in profiles.values()}) > 1:
        problems.append("[profile.dev] differs between the manifests:\n" + "\n".join(
            f"    {b}: {p}" for b, p in profiles.items()))
    for side in ("target", "host"):
        seen = collections.defaultdict(dict)
        for build, graph in graphs.items():
            for package, feature_sets in graph[side].items():
                seen[package][build] = feature_sets
        for package, by_build in sorted(seen.items()):
            if len({frozenset(fs) for fs in by_build.values()}) > 1:
                lines = "\n".join(f"    {b}: {' / '.join(sorted(fs)) or '(none)'}" for b, fs in by_build.items())
                problems.append(f"{package} ({side}):\n{lines}")
    if problems:
        print("Builds that would compile shared dependencies apart:", file=sys.stderr)
        print("\n".join(problems), file=sys.stderr)
        print(
            "Give the manifests one dev profile, and add the union of a crate's features to "
            "crates/anydev-workspace-hack/Cargo.toml ([dependencies] for target crates, "
            "[build-dependencies] for host crates).",
            file=sys.stderr,
        )
        return 1
    print(f"features and dev profiles agree across {len(BUILDS)} builds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
