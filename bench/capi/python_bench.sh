#!/usr/bin/env bash
# Python against the C API (bench/capi/python_bench.py) with the package installed as a user
# installs it (docs/python.md): a venv from Debian's /usr/bin/python3, `pip install
# --no-build-isolation python/` bundling build/release's libofld.so. Arguments go to the script.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(realpath -m "${OFLD_BUILD_DIR:-build/release}")
cmake --build "$build" --target ofld_shared capi_bench >/dev/null
tmp=$(mktemp -d /tmp/ofld-python-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 -m venv --system-site-packages "$tmp/venv"
OFLD_BUILD_DIR="$build" "$tmp/venv/bin/pip" install -q --no-build-isolation --no-index python/
"$tmp/venv/bin/python" bench/capi/python_bench.py --bench "$build/capi_bench" "$@"
