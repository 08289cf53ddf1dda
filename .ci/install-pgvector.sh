#!/usr/bin/env bash
# Builds pgvector for the machine's PostgreSQL 15 from Debian's source package: bookworm has no
# binary package for it, trixie has the source. Skips the build when the extension is there.
set -euo pipefail
pg_config=/usr/lib/postgresql/15/bin/pg_config
if [ -f "$($pg_config --sharedir 2>/dev/null)/extension/vector.control" ]; then
  echo "pgvector is already installed"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
echo "deb-src http://deb.debian.org/debian trixie main" > /etc/apt/sources.list.d/trixie-src.list
apt-get update -qq
apt-get install -y -qq --no-install-recommends postgresql-server-dev-15 make gcc dpkg-dev >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
apt-get source -qq --download-only pgvector >/dev/null
tar -xf pgvector_*.orig.tar.* 
cd pgvector-*/
make -s -j2 PG_CONFIG=$pg_config >/dev/null
make -s install PG_CONFIG=$pg_config >/dev/null
echo "pgvector $(grep default_version vector.control | cut -d"'" -f2) installed"
