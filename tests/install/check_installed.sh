#!/usr/bin/env bash
# The installed mpsbench works on its own. Copies the source tree (git's files, build trees left out),
# builds the copy (or, with MPSBENCH_INSTALL_CHECK_BUILD, uses the checkout's build), installs it twice: `cmake --install --prefix` and the DEB package of `cpack -G DEB`,
# unpacked with `dpkg -x` (no root needed, nothing installed on the machine), deletes the copy and its
# build tree, then runs the installed programs in both: mpsbench --version and --list-presets (the
# presets found beside the program, the error naming where it looked when they are missing), a 2-rank
# CPU run through mpirun with --preset quick, mpsbench-sweep --help and a CPU sweep that must run the
# mpsbench beside it, the other programs' --help, and no library "not found" by ldd. The package's
# control file must carry the project version (VERSION) and the runtime dependencies.
#
# usage: tests/install/check_installed.sh [WORKDIR]   (default: a new temporary directory)
# scripts/bootstrap.sh test runs it after the other tests (docs/install.md, "The install check").
# Environment: MPSBENCH_INSTALL_CHECK_JOBS (build jobs; default nproc),
#   MPSBENCH_INSTALL_CHECK_CUDA_ARCHITECTURES (default 90-real: one architecture builds fastest; no GPU
#   code runs here), MPSBENCH_INSTALL_CHECK_KEEP=1 keeps WORKDIR (else removed when all passed),
#   MPSBENCH_INSTALL_CHECK_BUILD=DIR: install from this build tree of the checkout (already built: the test
#   command's own, which saves building a second copy) and run the installed programs where neither the
#   checkout nor DIR can be seen: a mount namespace (`unshare -m`, as root) lays an empty tmpfs over the
#   checkout. Where that is not possible it says so and builds a copy, as without it.
# Internal: `check_installed.sh --trees WORK` (run by the check itself in that namespace, from its copy in
# WORK) checks the installed trees alone.
set -euo pipefail

say() { printf 'check_installed: %s\n' "$*"; }
fail() { printf 'check_installed: FAILED: %s\n' "$*" >&2; exit 1; }

# --- the installed programs ----------------------------------------------------------------------

# check_tree PREFIX: everything a user runs, from PREFIX/bin alone.
check_tree() {
  local p=$1 out=$work/out-$2 bin=$1/bin data=$1/share/mpsbench
  say "$2: checking $p"
  mkdir -p "$out"
  local f
  for f in bin/mpsbench bin/mpsbench-probe bin/mpsbench-meter bin/mpsbench-micro bin/bare-gemm bin/mpsbench-sweep \
           libexec/mpsbench/small-kernels share/mpsbench/sweep/app-rank-gpu \
           share/mpsbench/examples/check_output.sh; do
    [ -x "$p/$f" ] || fail "$2: $p/$f is missing or not executable"
  done
  for f in share/mpsbench/presets/quick.json share/mpsbench/schema/mpsbench-results.schema.json \
           share/mpsbench/sweep/mpsbench_sweep/cli.py share/mpsbench/sweep/mpsbench_sweep/locate.py \
           share/mpsbench/sweep/mpsbench_core/verdict.py \
           share/mpsbench/examples/README.md share/doc/mpsbench/README.md; do
    [ -f "$p/$f" ] || fail "$2: $p/$f is missing"
  done
  if find "$p" -name __pycache__ | grep -q .; then fail "$2: __pycache__ installed"; fi
  for f in "$bin"/mpsbench "$bin"/mpsbench-probe "$bin"/mpsbench-meter "$bin"/mpsbench-micro "$bin"/bare-gemm \
           "$p"/libexec/mpsbench/small-kernels; do
    if ldd "$f" | grep -q 'not found'; then fail "$2: ldd $f: $(ldd "$f" | grep 'not found')"; fi
  done

  (
    unset MPSBENCH_PRESET_DIR
    "$bin/mpsbench" --version | grep -qF "$version" || fail "$2: mpsbench --version does not say $version"
    "$bin/mpsbench" --list-presets >"$out/presets.txt" || fail "$2: mpsbench --list-presets"
    for name in quick ci full workshop; do
      grep -q "^$name: " "$out/presets.txt" || fail "$2: --list-presets lacks $name"
    done
    # Which directory it used: the installed one (the source copy is gone anyway).
    local err
    if err=$("$bin/mpsbench" --preset no-such-preset 2>&1); then fail "$2: --preset no-such-preset passed"; fi
    case $err in *"presets from $data/presets"*) ;; *) fail "$2: presets not from $data/presets: $err" ;; esac
    # None found: the error names every directory looked in.
    mv "$data/presets" "$data/presets.away"
    if err=$("$bin/mpsbench" --list-presets 2>&1); then fail "$2: --list-presets passed without presets"; fi
    mv "$data/presets.away" "$data/presets"
    case $err in *"looked in $data/presets"*"MPSBENCH_PRESET_DIR"*) ;; *) fail "$2: no preset directory: $err" ;; esac
    # MPSBENCH_PRESET_DIR wins.
    mkdir -p "$out/my-presets"
    printf '{"description": "mine", "args": ["--kernel", "matmul"]}\n' >"$out/my-presets/mine.json"
    MPSBENCH_PRESET_DIR=$out/my-presets "$bin/mpsbench" --list-presets | grep -q '^mine: mine' ||
      fail "$2: MPSBENCH_PRESET_DIR not used"

    # A 2-rank CPU run of the quick preset, on small sizes.
    # shellcheck disable=SC2046
    mpirun $(mpiexec_flags 2) --oversubscribe -np 2 "$bin/mpsbench" --device cpu --preset quick \
      --size matmul=64 --size nbody=256 --size hybrid=256 --min-time 0.02 --output "$out/run.json" \
      >"$out/run.log" 2>&1 || { cat "$out/run.log"; fail "$2: mpirun -np 2 mpsbench --device cpu --preset quick"; }
    python3 - "$out/run.json" "$version" <<'EOF' || fail "$2: $out/run.json"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["context"]["version"] == sys.argv[2], doc["context"]["version"]
assert doc["results"], "no results"
EOF

    "$bin/mpsbench-sweep" --help >"$out/sweep-help.txt" || fail "$2: mpsbench-sweep --help"
    grep -q -- '--mpsbench PATH' "$out/sweep-help.txt" || fail "$2: mpsbench-sweep --help lists no --mpsbench"
    # The sweep runs the mpsbench beside it (no --mpsbench), which must say so in the merged file.
    (cd "$out" && "$bin/mpsbench-sweep" --modes streams --ranks-per-gpu 1 --output sweep.json \
       -- --device cpu --kernel matmul --size 64 --min-time 0.02 --repetitions 2) >"$out/sweep.log" 2>&1 ||
      { cat "$out/sweep.log"; fail "$2: mpsbench-sweep on the CPU"; }
    grep -qF "$bin/mpsbench " "$out/sweep.json" || fail "$2: the sweep did not run $bin/mpsbench"

    "$bin/mpsbench-micro" --help >/dev/null || fail "$2: mpsbench-micro --help"
    "$bin/bare-gemm" --help >/dev/null || fail "$2: bare-gemm --help"
    "$bin/mpsbench-probe" --version >/dev/null || fail "$2: mpsbench-probe --version"
    # The farmer's meter: its protocol under a scripted NVML, from the installed tree alone.
    echo '{"gpus": [{"uuid": "GPU-fake-0", "tick_s": 0.02}]}' >"$out/nvml.json"
    printf 'start\nstop\n' | MPSBENCH_FAKE_NVML=$out/nvml.json "$bin/mpsbench-meter" >"$out/meter.txt" ||
      fail "$2: mpsbench-meter under a fake NVML"
    grep -qF '{"ready":true,"gpus":[{"index":0,"uuid":"GPU-fake-0"}]}' "$out/meter.txt" &&
      grep -qF '"span_s":' "$out/meter.txt" || fail "$2: mpsbench-meter printed: $(cat "$out/meter.txt")"
    "$p/libexec/mpsbench/small-kernels" --help >/dev/null || fail "$2: small-kernels --help"
  )
}

if [ "${1:-}" = --trees ]; then
  work=$2 version=$MPSBENCH_INSTALL_CHECK_VERSION
  [ ! -e "$MPSBENCH_INSTALL_CHECK_HIDDEN/VERSION" ] || fail "$MPSBENCH_INSTALL_CHECK_HIDDEN is not hidden"
  # shellcheck source=SCRIPTDIR/../mpi/mpiexec_flags.sh
  source "$work/mpiexec_flags.sh"
  check_tree "$work/prefix" cmake-install
  check_tree "$work/deb-root/usr" deb
  exit 0
fi

repo=$(cd "$(dirname "$0")/../.." && pwd)
jobs=${MPSBENCH_INSTALL_CHECK_JOBS:-$(nproc)}
archs=${MPSBENCH_INSTALL_CHECK_CUDA_ARCHITECTURES:-90-real}
version=$(head -n 1 "$repo/VERSION")
started=$SECONDS

if [ $# -gt 0 ]; then
  work=$1
  [ ! -e "$work" ] || [ -z "$(ls -A "$work")" ] || fail "$work: exists and is not empty"
  mkdir -p "$work"
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/mpsbench-install-check.XXXXXX")
fi
work=$(cd "$work" && pwd -P)  # physical: the programs see their own paths so (/proc/self/exe)
src=$work/src build=$work/build prefix=$work/prefix root=$work/deb-root

# shellcheck source=SCRIPTDIR/../mpi/mpiexec_flags.sh
source "$repo/tests/mpi/mpiexec_flags.sh"

# --- build, install, package ---------------------------------------------------------------------

# build_copy: git's files of the checkout copied to $src and built in $build.
build_copy() {
  say "copying the source tree to $src"
  mkdir -p "$src"
  if git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    # Tracked and untracked-but-not-ignored files that exist (a tracked file deleted in the work tree is not).
    (cd "$repo" && git ls-files -z --cached --others --exclude-standard |
       while IFS= read -r -d '' f; do if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi; done |
       tar --null -T - -cf -) | tar -C "$src" -xf -
  else
    (cd "$repo" && tar --exclude='./build*' --exclude='./.git' -cf - .) | tar -C "$src" -xf -
  fi
  say "building the copy in $build (CUDA architectures $archs, $jobs jobs)"
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$archs" \
    -DMPSBENCH_BUILD_TESTS=OFF >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "configure"; }
  cmake --build "$build" -j "$jobs" >"$work/build.log" 2>&1 || { tail -n 50 "$work/build.log"; fail "build"; }
}

# can_hide: whether a mount namespace can hide the checkout from the installed programs.
can_hide() {
  [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && unshare -m true 2>/dev/null
}

given=${MPSBENCH_INSTALL_CHECK_BUILD:-}
if [ -n "$given" ] && ! can_hide; then
  say "no mount namespace here to hide the checkout from the installed programs (needs root and unshare -m): building a copy instead of installing from $given"
  given=
fi
if [ -n "$given" ]; then
  build=$(cd "$given" && pwd -P)
  say "installing from the checkout's build tree $build"
else
  build_copy
fi

say "cmake --install --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log"

say "cpack -G DEB"
(cd "$build" && cpack -G DEB -B "$work/cpack") >"$work/cpack.log" 2>&1 || { cat "$work/cpack.log"; fail "cpack -G DEB"; }
debs=("$work"/cpack/mpsbench_*.deb)
if [ ${#debs[@]} -ne 1 ] || [ ! -f "${debs[0]}" ]; then fail "cpack made no single mpsbench_*.deb: ${debs[*]}"; fi
deb=$work/$(basename "${debs[0]}")
mv "${debs[0]}" "$deb"
rm -rf "$work/cpack"
dpkg-deb -I "$deb" >"$work/control.txt"
field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = mpsbench ] || fail "Package: $(field Package)"
[ "$(field Version)" = "$version" ] || fail "Version: '$(field Version)', VERSION says '$version'"
depends=$(field Depends)
for want in 'openmpi-bin' 'libopenmpi3t64 | libopenmpi3' 'cuda-cudart-' 'libcublas-' 'python3'; do
  case ", $depends" in *"$want"*) ;; *) fail "Depends lacks '$want': $depends" ;; esac
done
dpkg -x "$deb" "$root"

if [ -n "$given" ]; then
  # Every path of the checkout (its build tree inside it, or hidden too) behind an empty tmpfs; this script
  # and its helper run from their copies in $work.
  cp "$0" "$work/check_installed.sh"
  cp "$repo/tests/mpi/mpiexec_flags.sh" "$work/mpiexec_flags.sh"
  say "hiding $repo and $build from the installed programs (a mount namespace)"
  # shellcheck disable=SC2016
  MPSBENCH_INSTALL_CHECK_VERSION=$version MPSBENCH_INSTALL_CHECK_HIDDEN=$repo unshare -m bash -c \
    'mount -t tmpfs none "$1" && { [ "${2#"$1"/}" != "$2" ] || mount -t tmpfs none "$2"; } &&
     exec bash "$3/check_installed.sh" --trees "$3"' hide "$repo" "$build" "$work" ||
    fail "the installed programs, with the checkout hidden"
else
  say "deleting the source copy and the build tree"
  rm -rf "$src" "$build"
  check_tree "$prefix" cmake-install
  check_tree "$root/usr" deb
fi

say "the control file of $(basename "$deb"):"
sed 's/^/  /' "$work/control.txt"
say "passed ($((SECONDS - started)) s)"
if [ "${MPSBENCH_INSTALL_CHECK_KEEP:-}" != 1 ]; then rm -rf "$work"; fi
