#!/usr/bin/env bash
# Neovim 0.10 for the editor tests, next to Debian bookworm's 0.7.2 and PyPI's 0.12-dev.
# No registry we may use ships a 0.10 build for bookworm: PyPI's Neovim wheels are 0.11/0.12,
# npm has only client libraries. Debian 13 (trixie) ships 0.10.4, built against glibc 2.38
# (bookworm has 2.36). So this script fetches trixie's .debs with apt (a private apt state
# under .tools/, the system's sources and packages untouched), unpacks them with dpkg -x, and
# a wrapper runs nvim through trixie's own dynamic loader and libraries. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../.."

dir=$PWD/.tools/nvim-0.10
wrapper=$dir/bin/nvim

if [ -x "$wrapper" ] && timeout 20 "$wrapper" --headless --clean --version </dev/null 2>/dev/null | grep -q '^NVIM v0\.10\.'; then
  echo "nvim010.sh: $("$wrapper" --version </dev/null | head -n1) already in $dir"
  exit 0
fi

rm -rf "$dir"
mkdir -p "$dir"/apt/{lists/partial,cache/archives/partial,etc/preferences.d} "$dir"/debs "$dir"/root "$dir"/bin
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" \
  >"$dir/apt/etc/sources.list"
apt_opts=(
  -o "Dir::Etc::sourcelist=$dir/apt/etc/sources.list" -o Dir::Etc::sourceparts=/dev/null
  -o "Dir::State::Lists=$dir/apt/lists" -o "Dir::Cache=$dir/apt/cache"
  -o "Dir::Etc::preferencesparts=$dir/apt/etc/preferences.d"
  -o APT::Sandbox::User=root
)
apt-get "${apt_opts[@]}" -qq update
# neovim's dependencies on trixie, plus the C library and loader they were linked against.
(cd "$dir/debs" && apt-get "${apt_opts[@]}" -qq download \
  neovim neovim-runtime libluajit-5.1-2 libluajit-5.1-common libmsgpack-c2 libtree-sitter0.22 \
  libunibilium4 libuv1t64 libvterm0 lua-lpeg lua-luv libc6 libgcc-s1)
for deb in "$dir"/debs/*.deb; do
  dpkg -x "$deb" "$dir/root"
done
rm -rf "$dir/apt" "$dir/debs"
# Upstream's layout has the bundled tree-sitter parsers on 'runtimepath' via lib/nvim; Debian
# moves them out of the runtime, which the wrapper's VIMRUNTIME would miss.
ln -sfn ../../../lib/nvim/parser "$dir/root/usr/share/nvim/runtime/parser"

cat >"$wrapper" <<EOF
#!/bin/sh
# Neovim 0.10.4 from Debian trixie, run with trixie's loader and libraries (see scripts/bootstrap.d/nvim010.sh).
R=\$(cd "\$(dirname "\$0")/../root" && pwd)
export VIMRUNTIME="\$R/usr/share/nvim/runtime"
export LUA_CPATH="\$R/usr/lib/x86_64-linux-gnu/lua/5.1/?.so;\${LUA_CPATH:-;}"
exec "\$R/usr/lib64/ld-linux-x86-64.so.2" --library-path "\$R/usr/lib/x86_64-linux-gnu" "\$R/usr/bin/nvim" "\$@"
EOF
chmod +x "$wrapper"

if ! timeout 20 "$wrapper" --headless --clean --version </dev/null | grep -q '^NVIM v0\.10\.'; then
  echo "nvim010.sh: $wrapper did not run" >&2
  exit 1
fi
echo "nvim010.sh: installed $("$wrapper" --version </dev/null | head -n1) into $dir"
