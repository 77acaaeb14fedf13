#!/usr/bin/env bash
# A three-node RabbitMQ cluster on this machine, for the failover scenarios (chaos-tests, -Pfailover), from
# Debian's RabbitMQ 3.x (/usr/lib/rabbitmq): nothing of the single brokers on localhost:5672 and :5674 is
# touched (their files, node names, ports and epmd are not used).
#
# Each node runs in a network namespace of its own (olns1..olns3), joined to the others and to this machine by a
# bridge (olbr0): node N is olN@olN at ${NET}.N, AMQP on port 568N, distribution on 2568N. Why namespaces: a
# partition must be a real cut of the network between nodes, which the nodes only notice through their own
# distribution links timing out (net_ticktime), as in production. `partition N` adds blackhole routes between
# node N and the other two (in the three namespaces; clients on the bridge still reach every node), `heal`
# removes them. On loopback alone the cut cannot be made for one node's links without filtering the machine's
# shared `lo`, which other brokers and tests use.
#
# Usage (as root: namespaces, and the nodes run as user rabbitmq with Debian's Erlang cookie):
#   rabbitmq-cluster.sh start          fresh cluster of three (wipes a previous one's data); idempotent: a running,
#                                      complete cluster is left as it is
#   rabbitmq-cluster.sh stop           stops the nodes and removes the namespaces and the bridge
#   rabbitmq-cluster.sh status         each node running or not; exit 1 if a node is not running
#   rabbitmq-cluster.sh whole          exit 0 if node 1 sees all three running and clustered (one CLI call)
#   rabbitmq-cluster.sh uris           the three AMQP URIs, comma-separated (RABBITMQ_CLUSTER_URIS)
#   rabbitmq-cluster.sh kill N         SIGKILL node N's Erlang VM (beam), no shutdown of any kind
#   rabbitmq-cluster.sh stop-node N    stops node N gracefully
#   rabbitmq-cluster.sh start-node N   starts node N again (it rejoins with its data) and waits for it
#   rabbitmq-cluster.sh partition N    cuts node N off from the other two; `heal` undoes it
#   rabbitmq-cluster.sh ctl N ARGS...  rabbitmqctl on node N (also: queues N ARGS... for rabbitmq-queues)
#
# Every wait is bounded (ORDERLESS_CLUSTER_TIMEOUT seconds, default 90). Logs: $BASE/olN/log (the node's own log
# and its start-up output in $BASE/olN/log/console.log).
#
# Settings (environment): ORDERLESS_CLUSTER_DIR (default /var/tmp/orderless-rabbitmq-cluster),
# ORDERLESS_CLUSTER_NET (first three octets of the bridge's /24, default 10.81.0).
set -euo pipefail

BASE=${ORDERLESS_CLUSTER_DIR:-/var/tmp/orderless-rabbitmq-cluster}
NET=${ORDERLESS_CLUSTER_NET:-10.81.0}
TIMEOUT=${ORDERLESS_CLUSTER_TIMEOUT:-90}
BRIDGE=olbr0
SBIN=/usr/lib/rabbitmq/bin
COOKIE_HOME=/var/lib/rabbitmq   # Debian's cookie: every node of the cluster and its CLI share it
NODES="1 2 3"

log() { printf '[rabbitmq-cluster %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

ns() { echo "olns$1"; }
node() { echo "ol$1@ol$1"; }
dir() { echo "$BASE/ol$1"; }

check_node_arg() {
  case "${1:-}" in 1|2|3) ;; *) die "a node number 1, 2 or 3 expected, was '${1:-}'" ;; esac
}

# Erlang's own host table: olN resolves to the node's address in every namespace and in the CLI
write_inetrc() {
  mkdir -p "$BASE"
  { for n in $NODES; do printf '{host, {%s}, ["ol%s"]}.\n' "${NET//./,},$n" "$n"; done
    printf '{lookup, [file, native]}.\n'; } > "$BASE/inetrc"
}

write_node_files() {
  local n=$1 d
  d=$(dir "$n")
  mkdir -p "$d/mnesia" "$d/log"
  # rabbitmq-env reads this instead of /etc/rabbitmq/rabbitmq-env.conf (rabbit@localhost's)
  cat > "$d/rabbitmq-env.conf" <<EOF
NODENAME=$(node "$n")
DIST_PORT=2568$n
CONFIG_FILE=$d/rabbitmq.conf
MNESIA_BASE=$d/mnesia
LOG_BASE=$d/log
PID_FILE=$d/rabbitmq.pid
ENABLED_PLUGINS_FILE=$d/enabled_plugins
export ERL_INETRC=$BASE/inetrc
EOF
  # instead of /etc/rabbitmq/rabbitmq.conf (its listener is 5672)
  cat > "$d/rabbitmq.conf" <<EOF
listeners.tcp.default = 568$n
# clients reach the node over the bridge, not loopback: guest may log in from there (a private test network)
loopback_users = none
# a node cut off from the majority pauses (closes its clients, stops serving) until the partition heals: what
# quorum queues assume, and what lets clients move to the majority; autoheal would let the minority keep serving
cluster_partition_handling = pause_minority
# a cut is noticed within about 8 to 12 s (60 to 75 s by default), so the partition scenario is bounded and short
net_ticktime = 10
log.file.level = info
log.console = false
EOF
  echo "[]." > "$d/enabled_plugins"
  chown -R rabbitmq:rabbitmq "$d"
}

# runs a RabbitMQ CLI tool of node N inside its namespace, as user rabbitmq, bounded
cli() {
  local n=$1 tool=$2; shift 2
  timeout "$TIMEOUT" ip netns exec "$(ns "$n")" runuser -u rabbitmq -- env HOME="$COOKIE_HOME" \
    RABBITMQ_CONF_ENV_FILE="$(dir "$n")/rabbitmq-env.conf" ERL_INETRC="$BASE/inetrc" "$SBIN/$tool" "$@"
}

network_up() {
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add "$BRIDGE" type bridge
    ip addr add "$NET.254/24" dev "$BRIDGE"
    ip link set "$BRIDGE" up
  fi
  for n in $NODES; do
    if ! ip netns list | grep -qw "$(ns "$n")"; then
      ip netns add "$(ns "$n")"
    fi
    ip -n "$(ns "$n")" link set lo up
    if ! ip link show "olv$n" >/dev/null 2>&1; then
      ip link add "olv$n" type veth peer name eth0 netns "$(ns "$n")"
      ip link set "olv$n" master "$BRIDGE" up
      ip -n "$(ns "$n")" addr add "$NET.$n/24" dev eth0
      ip -n "$(ns "$n")" link set eth0 up
    fi
  done
}

network_down() {
  for n in $NODES; do
    ip link del "olv$n" 2>/dev/null || true
    ip netns del "$(ns "$n")" 2>/dev/null || true
  done
  ip link del "$BRIDGE" 2>/dev/null || true
}

running() {   # node N answers as a running RabbitMQ application
  cli "$1" rabbitmqctl -q status >/dev/null 2>&1
}

beam_pid() {  # the pid of node N's Erlang VM, from its pid file
  local f
  f="$(dir "$1")/rabbitmq.pid"
  [ -s "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && cat "$f"
}

launch() {
  local n=$1 d
  d=$(dir "$n")
  log "starting $(node "$n") in $(ns "$n") at $NET.$n:568$n (log: $d/log)"
  ip netns exec "$(ns "$n")" runuser -u rabbitmq -- env HOME="$COOKIE_HOME" \
    RABBITMQ_CONF_ENV_FILE="$d/rabbitmq-env.conf" ERL_INETRC="$BASE/inetrc" \
    setsid "$SBIN/rabbitmq-server" >> "$d/log/console.log" 2>&1 < /dev/null &
}

await_started() {
  local n=$1
  # await_startup waits for the pid file's VM to boot; the pid file appears a moment after the launch
  local deadline=$((SECONDS + TIMEOUT))
  until [ -s "$(dir "$n")/rabbitmq.pid" ]; do
    [ $SECONDS -lt $deadline ] || die "$(node "$n") wrote no pid file in ${TIMEOUT} s; see $(dir "$n")/log"
    sleep 0.5
  done
  cli "$n" rabbitmqctl -q --timeout "$TIMEOUT" await_startup >/dev/null \
    || die "$(node "$n") did not start in ${TIMEOUT} s; see $(dir "$n")/log"
}

amqp_answers() {
  (exec 3<>"/dev/tcp/$NET.$1/568$1") 2>/dev/null
}

all_running() {
  for n in $NODES; do running "$n" || return 1; done
  # and clustered: node 1 sees three running nodes
  [ "$(cli 1 rabbitmqctl -q eval 'length(rabbit_nodes:all_running()).' 2>/dev/null)" = "3" ]
}

stop_node() {
  local n=$1 pid
  if pid=$(beam_pid "$n"); then
    log "stopping $(node "$n")"
    cli "$n" rabbitmqctl -q stop >/dev/null 2>&1 || true
    local deadline=$((SECONDS + TIMEOUT))
    while kill -0 "$pid" 2>/dev/null; do
      if [ $SECONDS -ge $deadline ]; then
        log "$(node "$n") did not stop in ${TIMEOUT} s: killing it"
        kill -KILL "$pid" 2>/dev/null || true
        break
      fi
      sleep 0.5
    done
  fi
  rm -f "$(dir "$n")/rabbitmq.pid"
}

stop_epmds() {   # each namespace's epmd was started by its node; nothing else runs there
  for n in $NODES; do
    if ip netns list | grep -qw "$(ns "$n")"; then
      for pid in $(ip netns pids "$(ns "$n")" 2>/dev/null); do kill "$pid" 2>/dev/null || true; done
    fi
  done
}

start() {
  [ "$(id -u)" = 0 ] || die "run as root (network namespaces; the nodes run as user rabbitmq)"
  [ -x "$SBIN/rabbitmq-server" ] || die "no Debian RabbitMQ in $SBIN: apt-get install rabbitmq-server"
  [ -r "$COOKIE_HOME/.erlang.cookie" ] || die "no Erlang cookie in $COOKIE_HOME (Debian's rabbitmq-server makes it)"
  if ip link show "$BRIDGE" >/dev/null 2>&1 && all_running; then
    log "the cluster is running: nothing to do"
    return 0
  fi
  local t0=$SECONDS
  stop_all_quietly
  rm -rf "$BASE"
  write_inetrc
  network_up
  for n in $NODES; do write_node_files "$n"; launch "$n"; done
  for n in $NODES; do await_started "$n"; done
  for n in 2 3; do
    log "$(node "$n") joins $(node 1)"
    cli "$n" rabbitmqctl -q stop_app >/dev/null
    cli "$n" rabbitmqctl -q join_cluster "$(node 1)" >/dev/null
    cli "$n" rabbitmqctl -q start_app >/dev/null
  done
  local deadline=$((SECONDS + TIMEOUT))
  until all_running; do
    [ $SECONDS -lt $deadline ] || die "the three nodes did not form a cluster in ${TIMEOUT} s; see $BASE/ol*/log"
    sleep 1
  done
  log "three nodes running and clustered in $((SECONDS - t0)) s: $(uris)"
}

stop_all_quietly() {
  for n in $NODES; do stop_node "$n"; done
  stop_epmds
  network_down
}

uris() {
  local out="" n
  for n in $NODES; do out="${out:+$out,}amqp://guest:guest@$NET.$n:568$n/%2F"; done
  echo "$out"
}

route_blackholes() {   # add|del the routes that cut node N off from the other two
  local verb=$1 n=$2 m
  for m in $NODES; do
    [ "$m" = "$n" ] && continue
    ip -n "$(ns "$n")" route "$verb" blackhole "$NET.$m/32" 2>/dev/null || true
    ip -n "$(ns "$m")" route "$verb" blackhole "$NET.$n/32" 2>/dev/null || true
  done
}

cmd=${1:-}
shift || true
case "$cmd" in
  start) start ;;
  stop)
    stop_all_quietly
    log "stopped; data left in $BASE (removed by the next start)" ;;
  status)
    for n in $NODES; do
      if running "$n"; then echo "$(node "$n") running (pid $(beam_pid "$n"))"; else echo "$(node "$n") not running"; fi
    done
    all_running ;;
  whole)   # one CLI call (each takes seconds): node 1 runs and sees all three running, clustered
    [ "$(cli 1 rabbitmqctl -q eval 'length(rabbit_nodes:all_running()).' 2>/dev/null)" = "3" ] ;;
  uris) uris ;;
  kill)
    check_node_arg "${1:-}"
    pid=$(beam_pid "$1") || die "$(node "$1") is not running"
    kill -KILL "$pid"
    log "SIGKILL sent to $(node "$1") (beam pid $pid)" ;;
  stop-node) check_node_arg "${1:-}"; stop_node "$1" ;;
  start-node)
    check_node_arg "${1:-}"
    if ! beam_pid "$1" >/dev/null; then
      rm -f "$(dir "$1")/rabbitmq.pid"
      launch "$1"
    fi
    await_started "$1"
    log "$(node "$1") running" ;;
  partition)
    check_node_arg "${1:-}"
    route_blackholes add "$1"
    log "$(node "$1") cut off from the other two" ;;
  heal)
    for n in $NODES; do route_blackholes del "$n"; done
    log "partitions healed" ;;
  ctl) check_node_arg "${1:-}"; n=$1; shift; cli "$n" rabbitmqctl "$@" ;;
  queues) check_node_arg "${1:-}"; n=$1; shift; cli "$n" rabbitmq-queues "$@" ;;
  *) die "usage: $0 start|stop|status|whole|uris|kill N|stop-node N|start-node N|partition N|heal|ctl N ARGS|queues N ARGS" ;;
esac
