# shellcheck shell=bash
# lib.sh — drive the real ibsim + OpenSM + infiniband-diags from integration tests.
#
# Source it from a test, then:
#
#   ry_tmpdir                          # per-test temp dir (cwd), EXIT trap cleans up
#   ry_start_ibsim fabric.net          # ibsim -n -s, sized from the file
#   ry_start_ibsim fabric.net --console   # ibsim reading console commands from a fifo
#   ry_ibsim_cmd 'Unlink "S-..."[3]'   # console command (needs --console)
#   ry_start_opensm --conf 'routing_engine ftree' -- -R ftree   # config lines / extra args
#   ry_wait_log 'SUBNET UP' 120        # wait for a line in the OpenSM log
#   ry_diag ibnetdiscover > disc.net   # run a diag tool against the simulator
#   ry_assert_eq expected actual "what"  /  ry_fail "message"
#
# Why it is shaped like this (observed with opensm 3.3.23 / ibsim 0.10, see
# docs OPENSM_NOTES.md):
#  - ibsim's control socket name is machine-wide (an abstract unix socket, never
#    a network port): every simulator gets a unique IBSIM_SOCKNAME built from
#    this shell's PID and a counter, and every client is started with it.
#  - libumad2sim leaves sys-<pid>/ folders in the client's cwd: everything runs
#    inside the per-test temp dir, removed at exit.
#  - OpenSM blocks forever in its exit path when the simulator is already gone:
#    clients are stopped first (TERM, then KILL after a grace period), ibsim last.
#  - ibsim without -n spins at 100% CPU once stdin ends: console mode keeps a
#    fifo open on a file descriptor of this shell until ibsim is stopped.
# Only processes started here are ever signalled, always by PID.
#
# Environment knobs: RY_KEEP_TMP=1 keeps the temp dir; RY_VERBOSE=1 logs more.

RY_UMAD2SIM=${RY_UMAD2SIM:-/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so}

# The tests' python3 is Debian's (scripts/setup.sh installs it, and
# python3-selenium for it), not whichever comes first on PATH: a version
# manager's shim there (pyenv: a bash script that execs the interpreter
# after its own start-up) costs ~0.35 s per call, and some tests call
# python3 hundreds of times. A function, so every `python3` of a script
# that sources this file, and of this file, is it.
RY_PYTHON=${RY_PYTHON:-/usr/bin/python3}
[[ -x "$RY_PYTHON" ]] || RY_PYTHON=$(command -v python3 || echo python3)
python3() { "$RY_PYTHON" "$@"; }

RY_TMP=""            # the per-test temp dir
RY_COUNTER=0         # for unique socket names
RY_IBSIM_PID=""
RY_IBSIM_FD=""       # write end of the console fifo (console mode)
RY_IBSIM_LOG=""
RY_SOCKNAME=""       # IBSIM_SOCKNAME of the current simulator
RY_OPENSM_PID=""
RY_OPENSM_LOG=""     # OpenSM's log file (-f)
RY_OPENSM_CONF=""
RY_OPENSM_DIR=""     # OSM_TMP_DIR, OSM_CACHE_DIR and dump_files_dir
RY_CLIENT_PIDS=()    # other background clients (ry_bg_diag, ry_start_standby_opensm)
RY_STANDBY_PID=""   # the second OpenSM of ry_start_standby_opensm
RY_RAILYARDD_PID=""  # railyardd started with ry_start_railyardd
RY_URL=""            # its base URL, http://127.0.0.1:PORT

ry_log() { echo "[ry $(date +%H:%M:%S)] $*" >&2; }

ry_fail() {
  echo "FAIL: $*" >&2
  exit 1
}

ry_pass() { echo "PASS: $*" >&2; }

# ry_assert_eq EXPECTED ACTUAL [WHAT]
ry_assert_eq() {
  if [[ "$1" != "$2" ]]; then
    ry_fail "${3:-values differ}: expected '$1', got '$2'"
  fi
}

# ry_assert_ne UNEXPECTED ACTUAL [WHAT]
ry_assert_ne() {
  if [[ "$1" == "$2" ]]; then
    ry_fail "${3:-values equal}: did not expect '$1'"
  fi
}

# ry_assert_contains HAYSTACK NEEDLE [WHAT]  (fixed string)
ry_assert_contains() {
  if [[ "$1" != *"$2"* ]]; then
    ry_fail "${3:-missing text}: '$2' not found in: $1"
  fi
}

# ry_assert_file_contains FILE EXTENDED-REGEX [WHAT]
ry_assert_file_contains() {
  [[ -f "$1" ]] || ry_fail "${3:-missing file}: $1 does not exist"
  grep -Eq -- "$2" "$1" || ry_fail "${3:-missing line}: /$2/ not found in $1"
}

# ry_run_expect_rc EXPECTED_RC CMD...  runs CMD, fails unless it exits with EXPECTED_RC.
ry_run_expect_rc() {
  local want=$1 rc=0
  shift
  "$@" || rc=$?
  [[ "$rc" == "$want" ]] || ry_fail "expected exit $want, got $rc from: $*"
}

# Stops one of our processes: TERM, grace period, KILL; then reaps it.
_ry_stop_pid() {
  local pid=$1 grace=${2:-5} name=${3:-process} i
  [[ -n "$pid" ]] || return 0
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < grace * 10; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      # A zombie child still answers kill -0; reap it if it has exited.
      [[ "$(ps -o stat= -p "$pid" 2>/dev/null)" == Z* ]] && break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null && [[ "$(ps -o stat= -p "$pid" 2>/dev/null)" != Z* ]]; then
      [[ -n "${RY_VERBOSE:-}" ]] && ry_log "$name ($pid) ignored TERM, sending KILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  wait "$pid" 2>/dev/null || true
}

# ry_stop_opensm: stops OpenSM (keeps ibsim running).
ry_stop_opensm() {
  _ry_stop_pid "$RY_OPENSM_PID" 5 opensm
  RY_OPENSM_PID=""
}

# ry_stop_ibsim: stops clients first (OpenSM hangs if ibsim goes first), then ibsim.
ry_stop_ibsim() {
  local pid
  for pid in "${RY_CLIENT_PIDS[@]}"; do _ry_stop_pid "$pid" 3 client; done
  RY_CLIENT_PIDS=()
  ry_stop_opensm
  _ry_stop_pid "$RY_IBSIM_PID" 3 ibsim
  RY_IBSIM_PID=""
  if [[ -n "$RY_IBSIM_FD" ]]; then
    exec {RY_IBSIM_FD}>&-
    RY_IBSIM_FD=""
  fi
}

_ry_cleanup() {
  local rc=$?
  trap - EXIT
  set +e
  if [[ $rc -ne 0 ]]; then
    # Leave the evidence in the test output.
    if [[ -n "$RY_OPENSM_LOG" && -f "$RY_OPENSM_LOG" ]]; then
      echo "---- last lines of OpenSM log ($RY_OPENSM_LOG) ----" >&2
      tail -n 25 "$RY_OPENSM_LOG" >&2
    fi
    if [[ -n "$RY_IBSIM_LOG" && -f "$RY_IBSIM_LOG" ]]; then
      echo "---- last lines of ibsim log ----" >&2
      tail -n 15 "$RY_IBSIM_LOG" >&2
    fi
  fi
  if [[ $rc -ne 0 && -f "${RY_RAILYARDD_LOG:-}" ]]; then
    echo "---- last lines of railyardd log ----" >&2
    tail -n 15 "$RY_RAILYARDD_LOG" >&2
  fi
  ry_stop_railyardd
  ry_stop_ibsim
  if [[ -n "$RY_TMP" && -d "$RY_TMP" ]]; then
    cd / || true
    if [[ -n "${RY_KEEP_TMP:-}" ]]; then
      ry_log "kept $RY_TMP"
    else
      rm -rf -- "$RY_TMP"
    fi
  fi
  exit "$rc"
}

# ry_tmpdir: creates the per-test temp dir, cd's into it, installs the EXIT trap
# (also on INT/TERM). Prints nothing; the path is in $RY_TMP. Idempotent.
ry_tmpdir() {
  if [[ -z "$RY_TMP" ]]; then
    RY_TMP=$(mktemp -d "${TMPDIR:-/tmp}/railyard-it.XXXXXX")
    trap _ry_cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
  fi
  cd "$RY_TMP"
}

# ry_unique_name [PREFIX]: a name unique to this shell and call.
ry_unique_name() {
  RY_COUNTER=$((RY_COUNTER + 1))
  echo "${1:-ry}_$$_${RY_COUNTER}"
}

# ry_wait_for TIMEOUT_S DESCRIPTION CMD...: polls CMD every 0.2 s.
ry_wait_for() {
  local timeout=$1 what=$2 deadline
  shift 2
  deadline=$((SECONDS + timeout))
  until "$@"; do
    ((SECONDS < deadline)) || ry_fail "timed out after ${timeout}s waiting for $what"
    sleep 0.2
  done
}

_ry_alive() { [[ -n "$1" ]] && kill -0 "$1" 2>/dev/null && [[ "$(ps -o stat= -p "$1" 2>/dev/null)" != Z* ]]; }

# ry_log_count PATTERN [FILE]: number of lines matching the extended regex
# (FILE defaults to the OpenSM log).
ry_log_count() {
  local file=${2:-$RY_OPENSM_LOG}
  [[ -f "$file" ]] || { echo 0; return 0; }
  grep -Ec -- "$1" "$file" || true
}

# ry_wait_log PATTERN TIMEOUT_S [FILE] [MIN_COUNT]
# Waits until FILE (default: the OpenSM log) has at least MIN_COUNT (default 1)
# lines matching the extended regex. Fails early if OpenSM (when waiting on its
# log) has died. For "the next SUBNET UP" pass $(( $(ry_log_count 'SUBNET UP') + 1 )).
ry_wait_log() {
  local pattern=$1 timeout=${2:-60} file=${3:-$RY_OPENSM_LOG} want=${4:-1} deadline n
  [[ -n "$file" ]] || ry_fail "ry_wait_log: no log file (start OpenSM first or pass FILE)"
  deadline=$((SECONDS + timeout))
  while :; do
    n=$(ry_log_count "$pattern" "$file")
    ((n >= want)) && return 0
    if [[ "$file" == "$RY_OPENSM_LOG" ]] && ! _ry_alive "$RY_OPENSM_PID"; then
      ry_fail "OpenSM exited while waiting for /$pattern/ in $file"
    fi
    if ((SECONDS >= deadline)); then
      # The exit trap prints OpenSM's main log; any other file is shown here.
      if [[ "$file" != "$RY_OPENSM_LOG" && -f "$file" ]]; then
        echo "---- last lines of $file ----" >&2
        tail -n 25 "$file" >&2
      fi
      ry_fail "timed out after ${timeout}s waiting for /$pattern/ (x$want) in $file"
    fi
    sleep 0.2
  done
}

# ry_start_ibsim NETFILE [--console]
# Starts ibsim on NETFILE with a fresh IBSIM_SOCKNAME (exported, so ry_diag and
# ry_start_opensm use it), sized from the file's node and port counts, and waits
# until it is ready. --console: no -n; commands come from a fifo (ry_ibsim_cmd).
# Extra ibsim arguments can be given in RY_IBSIM_ARGS.
ry_start_ibsim() {
  local netfile=$1 mode=${2:-} counts nodes switches ports args timeout
  [[ -f "$netfile" ]] || ry_fail "ry_start_ibsim: no such file: $netfile"
  [[ -n "$RY_TMP" ]] || ry_tmpdir
  [[ -z "$RY_IBSIM_PID" ]] || ry_fail "ry_start_ibsim: a simulator is already running"
  netfile=$(realpath "$netfile")
  # "Switch 36 ...", "Ca 2 ...", "Hca 2 ...", "Rt 2 ..." headers: nodes, switches, ports.
  counts=$(awk '/^[ \t]*(Switch|Ca|Hca|Rt)[ \t]+[0-9]+/ {
                  n++; p += $2 + 1; if ($1 == "Switch") s++ }
                END { printf "%d %d %d", n, s, p }' "$netfile")
  read -r nodes switches ports <<<"$counts"
  ((nodes > 0)) || ry_fail "ry_start_ibsim: no node records in $netfile"
  # Defaults are 2048 nodes / 256 switches / 13312 ports; only ever raise them.
  args=(-N $((nodes + 64 > 2048 ? nodes + 64 : 2048))
        -S $((switches + 16 > 256 ? switches + 16 : 256))
        -P $((ports + 256 > 13312 ? ports + 256 : 13312)))
  RY_SOCKNAME=$(ry_unique_name ryibsim)
  export IBSIM_SOCKNAME=$RY_SOCKNAME
  RY_IBSIM_LOG=$RY_TMP/ibsim.log
  # shellcheck disable=SC2206
  local extra=(${RY_IBSIM_ARGS:-})
  if [[ "$mode" == "--console" ]]; then
    local fifo=$RY_TMP/ibsim.console
    mkfifo "$fifo"
    # Opened read-write so neither side blocks, and kept open: ibsim never sees EOF.
    exec {RY_IBSIM_FD}<>"$fifo"
    ibsim "${args[@]}" "${extra[@]}" -s "$netfile" <"$fifo" >"$RY_IBSIM_LOG" 2>&1 &
  else
    [[ -z "$mode" ]] || ry_fail "ry_start_ibsim: unknown option $mode"
    ibsim -n "${args[@]}" "${extra[@]}" -s "$netfile" </dev/null >"$RY_IBSIM_LOG" 2>&1 &
  fi
  RY_IBSIM_PID=$!
  [[ -n "${RY_VERBOSE:-}" ]] && ry_log "ibsim pid $RY_IBSIM_PID socket $RY_SOCKNAME: $nodes nodes, $switches switches"
  timeout=$((30 + nodes / 200))
  local deadline=$((SECONDS + timeout))
  until grep -q 'Network simulator ready' "$RY_IBSIM_LOG" 2>/dev/null; do
    _ry_alive "$RY_IBSIM_PID" || { cat "$RY_IBSIM_LOG" >&2; ry_fail "ibsim exited at start"; }
    ((SECONDS < deadline)) || ry_fail "ibsim not ready after ${timeout}s"
    sleep 0.1
  done
}

# ry_ibsim_cmd COMMAND...: sends one console command, e.g.
#   ry_ibsim_cmd 'Unlink "S-0000000000200001"[3]'
# The simulator must have been started with --console. Waits briefly so the
# command has been read before the caller inspects its effect.
ry_ibsim_cmd() {
  [[ -n "$RY_IBSIM_FD" ]] || ry_fail "ry_ibsim_cmd: ibsim was not started with --console"
  _ry_alive "$RY_IBSIM_PID" || ry_fail "ry_ibsim_cmd: ibsim is not running"
  printf '%s\n' "$*" >&"$RY_IBSIM_FD"
  sleep 0.3
}

# ry_start_opensm [--conf 'key value']... [--timeout S] [--no-wait] [--] [opensm args...]
# Writes an OpenSM config from `opensm -c`, with force_log_flush TRUE, a log file
# and dump dir in the temp dir, then the --conf lines (a key already in the
# template is replaced), starts OpenSM under libumad2sim and, unless --no-wait,
# waits for "SUBNET UP" (default timeout 120 s). Other arguments go to opensm
# verbatim (e.g. -R ftree, -U lfts.dump). LD_LIBRARY_PATH and other exported
# variables are inherited (for event plugins).
ry_start_opensm() {
  local conf_lines=() opensm_args=() wait=1 timeout=120
  while (($#)); do
    case $1 in
      --conf) conf_lines+=("$2"); shift 2 ;;
      --timeout) timeout=$2; shift 2 ;;
      --no-wait) wait=0; shift ;;
      --) shift; opensm_args+=("$@"); break ;;
      *) opensm_args+=("$1"); shift ;;
    esac
  done
  [[ -n "$RY_IBSIM_PID" ]] || ry_fail "ry_start_opensm: start ibsim first"
  [[ -z "$RY_OPENSM_PID" ]] || ry_fail "ry_start_opensm: OpenSM is already running"
  RY_OPENSM_DIR=$RY_TMP/opensm
  mkdir -p "$RY_OPENSM_DIR"
  RY_OPENSM_CONF=$RY_OPENSM_DIR/opensm.conf
  RY_OPENSM_LOG=$RY_OPENSM_DIR/opensm.log
  rm -f "$RY_OPENSM_LOG"
  opensm -c "$RY_OPENSM_CONF" >/dev/null 2>&1 || true
  [[ -s "$RY_OPENSM_CONF" ]] || ry_fail "opensm -c did not write a config template"
  local line key all_lines=(
    "force_log_flush TRUE"
    "log_file $RY_OPENSM_LOG"
    "dump_files_dir $RY_OPENSM_DIR"
    "${conf_lines[@]}")
  for line in "${all_lines[@]}"; do
    key=${line%% *}
    if grep -q "^${key} " "$RY_OPENSM_CONF"; then
      # Replace the template's line; '|' cannot appear in opensm option names.
      awk -v k="$key" -v l="$line" '$1 == k && !done { print l; done = 1; next } { print }' \
        "$RY_OPENSM_CONF" >"$RY_OPENSM_CONF.new" && mv "$RY_OPENSM_CONF.new" "$RY_OPENSM_CONF"
    else
      echo "$line" >>"$RY_OPENSM_CONF"
    fi
  done
  # Started from the temp dir (libumad2sim's sys-<pid>/ lands there); exec keeps
  # $! OpenSM's own PID.
  (
    cd "$RY_TMP" &&
      OSM_TMP_DIR=$RY_OPENSM_DIR OSM_CACHE_DIR=$RY_OPENSM_DIR LD_PRELOAD=$RY_UMAD2SIM \
        IBSIM_SOCKNAME=$RY_SOCKNAME \
        exec opensm -F "$RY_OPENSM_CONF" -f "$RY_OPENSM_LOG" "${opensm_args[@]}"
  ) </dev/null >"$RY_OPENSM_DIR/opensm.out" 2>&1 &
  RY_OPENSM_PID=$!
  [[ -n "${RY_VERBOSE:-}" ]] && ry_log "opensm pid $RY_OPENSM_PID, log $RY_OPENSM_LOG"
  if ((wait)); then
    ry_wait_log 'SUBNET UP' "$timeout"
  fi
}

# ry_opensm_engine: the routing engine OpenSM used for its last unicast pass,
# from "osm_ucast_mgr_process: <engine> tables configured on all switches"
# (logged at the default log level); empty if none yet. A plugin that failed to
# load shows up here as a fallback ("minhop").
ry_opensm_engine() {
  [[ -f "$RY_OPENSM_LOG" ]] || return 0
  sed -n 's/.*osm_ucast_mgr_process: \(.*\) tables configured on all switches.*/\1/p' "$RY_OPENSM_LOG" | tail -n 1
}

# ry_diag CMD [ARGS...]: runs an infiniband-diags tool (ibnetdiscover, ibroute,
# ibtracert, saquery, smpquery...) against the simulator. Output on stdout;
# stops after RY_DIAG_TIMEOUT seconds (default 300). Does not change the
# caller's working directory.
ry_diag() {
  [[ -n "$RY_SOCKNAME" ]] || ry_fail "ry_diag: start ibsim first"
  # In a subshell: the tool runs in the temp dir (its sys-<pid>/ lands there)
  # while the caller keeps its own working directory.
  (
    cd "${RY_TMP:-.}" &&
      IBSIM_SOCKNAME=$RY_SOCKNAME LD_PRELOAD=$RY_UMAD2SIM \
        exec timeout -k 5 "${RY_DIAG_TIMEOUT:-300}" "$@"
  )
}

# ry_bg_diag OUTFILE CMD [ARGS...]: like ry_diag, in the background; the PID is
# left in RY_LAST_PID and stopped at cleanup (call it directly, not in $(...)).
RY_LAST_PID=""
ry_bg_diag() {
  local out=$1
  shift
  # Relative OUTFILE names are the caller's; exec keeps $! the tool's own PID.
  (cd "${RY_TMP:-.}" && IBSIM_SOCKNAME=$RY_SOCKNAME LD_PRELOAD=$RY_UMAD2SIM exec "$@") >"$out" 2>&1 &
  RY_LAST_PID=$!
  RY_CLIENT_PIDS+=("$RY_LAST_PID")
}

# ry_require_tools TOOL...: fails clearly when a required tool is missing.
ry_require_tools() {
  local t
  for t in "$@"; do
    command -v "$t" >/dev/null 2>&1 || ry_fail "required tool not found: $t (run scripts/setup.sh)"
  done
  [[ -f "$RY_UMAD2SIM" ]] || ry_fail "libumad2sim not found at $RY_UMAD2SIM (package ibsim-utils)"
}

# ry_start_railyardd BINARY_DIR CONFIG [LOG]: starts railyardd on a free
# loopback port, waits until it listens; sets RY_RAILYARDD_PID and RY_URL.
ry_start_railyardd() {
  local bin=$1 config=$2
  RY_RAILYARDD_LOG=${3:-$RY_TMP/railyardd.log}
  rm -f "$RY_TMP/railyardd.port"
  "$bin/railyardd" --config "$config" --port 0 --port-file "$RY_TMP/railyardd.port" >>"$RY_RAILYARDD_LOG" 2>&1 &
  RY_RAILYARDD_PID=$!
  local deadline=$((SECONDS + 60))
  until [[ -s "$RY_TMP/railyardd.port" ]]; do
    _ry_alive "$RY_RAILYARDD_PID" || { tail -n 20 "$RY_RAILYARDD_LOG" >&2; ry_fail "railyardd exited at start"; }
    ((SECONDS < deadline)) || ry_fail "railyardd did not listen within 60 s"
    sleep 0.1
  done
  RY_URL="http://127.0.0.1:$(cat "$RY_TMP/railyardd.port")"
}

# ry_stop_railyardd [KILL]: SIGTERM (or SIGKILL with KILL) to the railyardd we started.
ry_stop_railyardd() {
  [[ -n "$RY_RAILYARDD_PID" ]] || return 0
  if [[ "${1:-}" == KILL ]]; then
    kill -KILL "$RY_RAILYARDD_PID" 2>/dev/null || true
    wait "$RY_RAILYARDD_PID" 2>/dev/null || true
  else
    _ry_stop_pid "$RY_RAILYARDD_PID" 5 railyardd
  fi
  RY_RAILYARDD_PID=""
}

# ry_api METHOD PATH [BODY] [TOKEN]: curl against railyardd; prints the body,
# then a last line with the HTTP status.
ry_api() {
  local method=$1 path=$2 body=${3:-} token=${4:-${RY_TOKEN:-}}
  local args=(-sS -X "$method" -w '\n%{http_code}' --max-time 60)
  [[ -n "$token" ]] && args+=(-H "Authorization: Bearer $token")
  [[ -n "$body" ]] && args+=(-H 'Content-Type: application/json' --data "$body")
  curl "${args[@]}" "$RY_URL$path"
}

# ry_snapshot NAME: the fabric as it is now, read back with the diags:
# NAME.topo (ibnetdiscover) and NAME.ibroute (ibroute of every switch in it).
ry_snapshot() {
  ry_diag ibnetdiscover >"$1.topo" 2>"$1.err" || { cat "$1.err" >&2; ry_fail "ibnetdiscover failed"; }
  local lid
  : >"$1.ibroute"
  for lid in $(sed -n 's/^Switch.* port 0 lid \([0-9][0-9]*\) .*/\1/p' "$1.topo"); do
    ry_diag ibroute "$lid" >>"$1.ibroute" 2>>"$1.err" || { cat "$1.err" >&2; ry_fail "ibroute $lid failed"; }
  done
}

# ry_plugin_tools BINARY_DIR: the plugin, the event sink and the port probe a
# plugin test runs (PLUGIN_DIR, SINK, PROBE), checked built; the plugin's
# folder on LD_LIBRARY_PATH (OpenSM opens it by bare name).
ry_plugin_tools() {
  PLUGIN_DIR=$1/sm_plugin
  SINK=$1/tests/event_sink
  PROBE=$PLUGIN_DIR/railyard-port-probe
  [[ -f "$PLUGIN_DIR/libosmrailyard.so" ]] || ry_fail "plugin not built: $PLUGIN_DIR/libosmrailyard.so"
  [[ -x "$SINK" ]] || ry_fail "event_sink not built: $SINK"
  [[ -x "$PROBE" ]] || ry_fail "probe not built: $PROBE"
  export LD_LIBRARY_PATH=$PLUGIN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}

# ry_switch_record NETFILE DESC: the "S-<guid>" record of the switch whose
# description is DESC in an ibnetdiscover-style NETFILE; fails if none.
ry_switch_record() {
  local rec
  rec=$(sed -n "s/^Switch.*\"\(S-[0-9a-f]*\)\".*# \"$2\".*/\1/p" "$1")
  [[ -n "$rec" ]] || ry_fail "no record for '$2' in $1"
  echo "$rec"
}

# ry_port_uses NAME SWITCH_RECORD PORT: how many CA LIDs the switch (record
# "S-<guid>") sends out of PORT in NAME.ibroute.
ry_port_uses() {
  awk -v guid="$(printf '0x%016x' "0x${2#S-}")" -v port="$(printf '%03d' "$3")" '
    /^Unicast lids/ { mine = index($0, "guid " guid) > 0 }
    mine && $2 == port && /Channel Adapter/ { n++ }
    END { print n + 0 }' "$1.ibroute"
}

# ry_verify_ok RAILYARD_BIN NAME: `railyard verify` of NAME.topo/NAME.ibroute
# (from ry_snapshot) finds every CA pair reachable and no credit loop, CA
# routes alone or with switch LIDs; fails the test otherwise.
ry_verify_ok() {
  local rc=0
  "$1" verify --topo "$2.topo" --lfts "$2.ibroute" --json --no-congestion >"$2.verify.json" 2>"$2.verify.err" || rc=$?
  ((rc == 0)) || { head -c 3000 "$2.verify.json" >&2; cat "$2.verify.err" >&2; ry_fail "$2: railyard verify exit $rc"; }
  jq -e '.pairs > 0 and .reachable == .pairs and .credit_loops.ca_routes.acyclic and
         .credit_loops.with_switch_lids.acyclic' "$2.verify.json" >/dev/null ||
    ry_fail "$2: not every pair reachable, or a credit loop: $(jq -c '{pairs, reachable}' "$2.verify.json")"
  ry_log "$2: $(jq -r '"\(.reachable)/\(.pairs) CA pairs reachable, no credit loop"' "$2.verify.json")"
}

# ry_changed_blocks A B: how many 64-entry LFT blocks differ between
# A.ibroute and B.ibroute (from ry_snapshot), counted by the test itself.
ry_changed_blocks() {
  python3 - "$1.ibroute" "$2.ibroute" <<'PY'
import re, sys
def read(path):
    tables, cur = {}, None
    for line in open(path):
        m = re.match(r"Unicast lids .* guid (0x[0-9a-f]+)", line)
        if m:
            cur = tables.setdefault(m.group(1), {})
            continue
        m = re.match(r"0x([0-9a-f]+) (\d+) ", line)
        if m and cur is not None:
            cur[int(m.group(1), 16)] = int(m.group(2))
    return tables
a, b = read(sys.argv[1]), read(sys.argv[2])
print(len({(g, lid // 64) for g in set(a) | set(b) for lid in set(a.get(g, {})) | set(b.get(g, {}))
           if a.get(g, {}).get(lid) != b.get(g, {}).get(lid)}))
PY
}

# ry_start_standby_opensm DIR SIM_HOST [CONF_LINE]...: a second OpenSM on the
# simulator, on the port of the CA whose description is SIM_HOST (ibsim gives
# clients that name none the first CA: the master and the diags), with its
# config, log (DIR/opensm.log), dumps and cache in DIR and the CONF_LINEs
# ('key value', replacing the template's). Started from the temp dir under
# libumad2sim, stopped before ibsim at cleanup (RY_CLIENT_PIDS); its PID is
# in RY_STANDBY_PID. Does not wait: see ry_wait_log ... DIR/opensm.log.
ry_start_standby_opensm() {
  local dir=$1 host=$2 line key
  shift 2
  [[ -n "$RY_IBSIM_PID" ]] || ry_fail "ry_start_standby_opensm: start ibsim first"
  mkdir -p "$dir"
  opensm -c "$dir/opensm.conf" >/dev/null 2>&1 || true
  [[ -s "$dir/opensm.conf" ]] || ry_fail "opensm -c did not write a config template"
  for line in "force_log_flush TRUE" "log_file $dir/opensm.log" "dump_files_dir $dir" "$@"; do
    key=${line%% *}
    awk -v k="$key" '$1 != k' "$dir/opensm.conf" >"$dir/opensm.conf.new" && mv "$dir/opensm.conf.new" "$dir/opensm.conf"
    echo "$line" >>"$dir/opensm.conf"
  done
  (
    cd "$RY_TMP" &&
      OSM_TMP_DIR=$dir OSM_CACHE_DIR=$dir LD_PRELOAD=$RY_UMAD2SIM IBSIM_SOCKNAME=$RY_SOCKNAME SIM_HOST=$host \
        exec opensm -F "$dir/opensm.conf" -f "$dir/opensm.log"
  ) </dev/null >"$dir/opensm.out" 2>&1 &
  RY_STANDBY_PID=$!
  RY_CLIENT_PIDS+=("$RY_STANDBY_PID")
}
