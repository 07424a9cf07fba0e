#!/bin/sh
# `npm run bench`: 10,000–20,000 open sockets need far more open files than the usual soft limit of
# 1024, so raise it as far as this machine allows (65536, else the hard limit) before starting.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
exec tsx bench/run.ts "$@"
