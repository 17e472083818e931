#!/usr/bin/env bash
# Neovim 0.10 for the editor tests, next to Debian bookworm's 0.7.2 and PyPI's 0.12-dev.
# No registry we may use ships a 0.10 build for bookworm: PyPI's Neovim wheels are 0.11/0.12,
# npm has only client libraries. Debian 13 (trixie) ships 0.10.4, built against glibc 2.38
# (bookworm has 2.36). So this script fetches trixie's .debs with apt (a private apt state
# under .tools/, the system's sources and packages untouched), unpacks them with dpkg -x, and
# points the nvim binary at trixie's own dynamic loader and libraries with patchelf (bookworm's,
# unpacked the same way). Running it through the loader instead would not do: the UI restarts
# /proc/self/exe with --embed, which would then be the loader. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../.."

mkdir -p .tools
# The physical path: the binary's loader and library paths are absolute.
dir="$(cd .tools && pwd -P)/nvim-0.10"
wrapper=$dir/bin/nvim

if [ -x "$wrapper" ] && timeout 20 "$wrapper" --headless --clean --version </dev/null 2>/dev/null | grep -q '^NVIM v0\.10\.'; then
  echo "nvim010.sh: $("$wrapper" --version </dev/null | head -n1) already in $dir"
  exit 0
fi

rm -rf "$dir"
mkdir -p "$dir"/apt/{lists/partial,cache/archives/partial,etc/preferences.d} "$dir"/debs "$dir"/root "$dir"/bin
# The Debian archive this machine's apt already uses (the main archive, not -security), so the
# private state asks the same mirror for trixie's packages.
mirror=$(
  { grep -hE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}'
    grep -hE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
      | sed -E 's/\[[^]]*\] //' | awk '{print $2}'
  } | grep -E '/debian/?$' | head -n1 || true
)
if [ -z "$mirror" ]; then
  echo "nvim010.sh: no Debian archive found in this machine's apt sources" >&2
  exit 1
fi
cat >"$dir/apt/etc/sources.list" <<EOF
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie main
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror bookworm main
EOF
apt_opts=(
  -o "Dir::Etc::sourcelist=$dir/apt/etc/sources.list" -o Dir::Etc::sourceparts=/dev/null
  -o "Dir::State::Lists=$dir/apt/lists" -o "Dir::Cache=$dir/apt/cache"
  -o "Dir::Etc::preferencesparts=$dir/apt/etc/preferences.d"
  -o APT::Sandbox::User=root
)
apt-get "${apt_opts[@]}" -qq update
# neovim's dependencies on trixie, plus the C library and loader they were linked against.
(cd "$dir/debs" && apt-get "${apt_opts[@]}" -qq download \
  neovim/trixie neovim-runtime/trixie libluajit-5.1-2/trixie libluajit-5.1-common/trixie \
  libmsgpack-c2/trixie libtree-sitter0.22/trixie libunibilium4/trixie libuv1t64/trixie \
  libvterm0/trixie lua-lpeg/trixie lua-luv/trixie libc6/trixie libgcc-s1/trixie)
(cd "$dir/apt" && apt-get "${apt_opts[@]}" -qq download patchelf/bookworm)
for deb in "$dir"/debs/*.deb; do
  dpkg -x "$deb" "$dir/root"
done
dpkg -x "$dir"/apt/patchelf_*.deb "$dir/patchelf"
# DT_RPATH (--force-rpath), unlike RUNPATH, also applies to the libraries nvim loads, so every
# one of them, the C library included, comes from root/.
"$dir/patchelf/usr/bin/patchelf" --force-rpath --set-rpath "$dir/root/usr/lib/x86_64-linux-gnu" \
  --set-interpreter "$dir/root/usr/lib64/ld-linux-x86-64.so.2" "$dir/root/usr/bin/nvim"
rm -rf "$dir/apt" "$dir/debs" "$dir/patchelf"
# Upstream's layout has the bundled tree-sitter parsers on 'runtimepath' via lib/nvim; Debian
# moves them out of the runtime, which the wrapper's VIMRUNTIME would miss.
ln -sfn ../../../lib/nvim/parser "$dir/root/usr/share/nvim/runtime/parser"

cat >"$wrapper" <<EOF
#!/bin/sh
# Neovim 0.10.4 from Debian trixie, on trixie's loader and libraries (see scripts/bootstrap.d/nvim010.sh).
R='$dir/root'
export VIMRUNTIME="\$R/usr/share/nvim/runtime"
export LUA_CPATH="\$R/usr/lib/x86_64-linux-gnu/lua/5.1/?.so;\${LUA_CPATH:-;}"
exec "\$R/usr/bin/nvim" "\$@"
EOF
chmod +x "$wrapper"

if ! timeout 20 "$wrapper" --headless --clean --version </dev/null | grep -q '^NVIM v0\.10\.'; then
  echo "nvim010.sh: $wrapper did not run" >&2
  exit 1
fi
echo "nvim010.sh: installed $("$wrapper" --version </dev/null | head -n1) into $dir"
