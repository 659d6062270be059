#!/bin/sh
# `make test` runs this first: the tests of shared state (replicas on one Redis)
# start Debian's redis-server on loopback. Present: nothing to do. Missing: as
# root on a machine with apt-get, install it; otherwise stop, before any test
# runs, with one line saying what to install. The package's own service is not
# used (the tests start their own servers on free ports).
set -eu
if command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ]; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "make test: installing redis-server with apt-get (the tests of shared state need it)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq redis-server >/dev/null
  if [ -x /usr/bin/redis-server ]; then
    exit 0
  fi
  echo "make test: apt-get installed redis-server but /usr/bin/redis-server is still missing" >&2
  exit 1
fi
echo "make test: the tests of shared state need Debian's redis-server: run 'sudo apt-get install redis-server' (or make test as root) and run make test again" >&2
exit 1
