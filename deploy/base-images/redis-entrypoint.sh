#!/bin/sh
# redis-server as the public redis image runs it: without a configuration file Redis only answers
# on loopback unless a password is set (protected mode); in a container network the other
# containers are the clients, so protected mode is off (an option given last wins over a file).
set -e
if [ "${1:-}" = redis-server ]; then
  shift
  exec redis-server "$@" --protected-mode no
fi
exec "$@"
