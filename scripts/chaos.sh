#!/bin/sh
# `npm run chaos`: the full run holds thousands of sockets and Redis connections, more open files than
# the usual soft limit of 1024; raise it as far as this machine allows before starting.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
exec tsx test/chaos/run.ts "$@"
