# The MQI calls of the labs as shell functions: each is one curl call of the REST API, spelled out
# in "Get started". Source it in the shell you run the labs in:  . docs/labs/lab.sh
# Needs curl and jq. Handles are URLs: conn prints a connection's, mqopen an object's.

QM1=${QM1:-http://127.0.0.1:9441}
QM2=${QM2:-http://127.0.0.1:9442}
QM3=${QM3:-http://127.0.0.1:9443}

_post() { curl -s -XPOST "$1" -H 'content-type: application/json' -d "${2:-"{}"}"; }
_list() { printf '%s\n' "$@" | jq -R . | jq -sc .; }
# An answer in one line: the error's reason, or the fields of the message the labs look at.
# The handle an answer carries, or the answer on stderr and status 1 (a queue manager not reached).
_handle() {
  local h; h=$(jq -r ".$1 // empty" <<< "$2" 2>/dev/null)
  [ -n "$h" ] || { echo "no $1: ${2:-no answer}" >&2; return 1; }
  echo "$h"
}
_brief() { jq -c "if .error then .error | {reason, reason_name} else $1 end"; }

# conn QM [APPL]              MQCONN: prints the connection, QM/v1/connections/HCONN
conn() {
  local h; h=$(_handle hconn "$(_post "$1/v1/connections" "{\"appl_name\":\"${2:-LAB}\"}")") || return 1
  echo "$1/v1/connections/$h"
}
# mqopen CONN QUEUE OPTION... MQOPEN: prints the object, CONN/objects/HOBJ; QMGR=QM3 mqopen ... opens
#                             the queue of another queue manager (ObjectQMgrName)
mqopen() {
  local c=$1 q=$2 h; shift 2
  h=$(_handle hobj "$(_post "$c/objects" \
    "{\"object_name\":\"$q\",\"object_qmgr\":\"${QMGR:-}\",\"options\":$(_list "$@")}")") || return 1
  echo "$c/objects/$h"
}
# put OBJ DATA [OPTION...]    MQPUT (default NO_SYNCPOINT): prints the MsgId; MD='{"expiry":50}' put ...
#                             sets MQMD fields
put() {
  local o=$1 d=$2; shift 2; [ $# -gt 0 ] || set -- NO_SYNCPOINT
  _post "$o/put" "{\"data\":\"$d\",\"options\":$(_list "$@"),\"md\":${MD:-"{}"}}" | _brief '{msg_id: .md.msg_id}'
}
# get OBJ [OPTION...]         MQGET (default NO_SYNCPOINT): prints the data and some MQMD fields (FIELDS
#                             for others, a jq object); with WAIT it waits up to WAIT_MS (5000)
get() {
  local o=$1 fields=${FIELDS:-}; shift; [ $# -gt 0 ] || set -- NO_SYNCPOINT
  [ -n "$fields" ] || fields='{data, put_qmgr: .md.put_qmgr, backout_count: .md.backout_count}'
  _post "$o/get" "{\"options\":$(_list "$@"),\"wait_ms\":${WAIT_MS:-5000}}" | _brief "$fields"
}
# cmit CONN / back CONN       MQCMIT / MQBACK
cmit() { _post "$1/commit"; echo; }
back() { _post "$1/backout"; echo; }
# disc CONN                   MQDISC
disc() { curl -s -XDELETE "$1"; echo; }
# mqsc QM <<EOF ... EOF       MQSC from standard input, answered as runmqsc prints it
mqsc() { qsg mqsc --url "$1"; }
