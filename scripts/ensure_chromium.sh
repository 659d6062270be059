#!/bin/sh
# `make test` runs this first: the browser tests drive Debian's chromium
# (tests/support.py: /usr/bin/chromium). Present: nothing to do. Missing: as root
# on a machine with apt-get, install it (with a font, so pages render text);
# otherwise stop, before any test runs, with one line saying what to install.
# CHROMIUM overrides the path checked (tests use it).
set -eu
chromium=${CHROMIUM:-/usr/bin/chromium}
packages="chromium fonts-dejavu-core"

if [ -x "$chromium" ]; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "make test: installing $packages with apt-get (the browser tests need $chromium)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # shellcheck disable=SC2086 # one word per package
  apt-get install -y -qq $packages >/dev/null
  if [ -x "$chromium" ]; then
    exit 0
  fi
  echo "make test: apt-get installed $packages but $chromium is still missing; install Chromium there and run make test again" >&2
  exit 1
fi
echo "make test: the browser tests need Debian's chromium at $chromium: run 'sudo apt-get install $packages' (or make test as root) and run make test again" >&2
exit 1
