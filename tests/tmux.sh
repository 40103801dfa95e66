# shellcheck shell=bash
# The dashboard in a real terminal: tmux runs it, a test types keys with
# send-keys and reads the screen with capture-pane.  Sourced by lib.sh.
#
#     tmux_begin NAME         a tmux server of the test's own (tmux -L NAME,
#                             no config file), killed at exit and its socket
#                             removed; from then on `tmux ARGS` talks to it
#     tmux_open SESSION COLS ROWS COMMAND
#                             SESSION (one of that name closed first), the
#                             one the helpers below read and type into
#     screen                  what the pane shows now
#     has ERE, lacks ERE      the screen matches ERE (grep -E), or not
#     has_text TEXT           the screen holds TEXT, character for character
#     shows SECONDS ERE       wait until the screen matches ERE
#     hides SECONDS ERE       wait until it no longer does
#     press KEY...            tmux key names (Enter, Escape, C-], Down...)
#     type_text TEXT          TEXT as typed, letter by letter
#     pane VARIABLE           one of tmux's format variables of the pane
#                             (cursor_y, pane_pid, alternate_on...)
#
# Nothing here sleeps: keys reach the pane in the order sent, so a test
# waits only for what the screen shows after them.

# The server ends with its last session, and a new-session right after a
# kill-session could reach it on its way out ("no server running"): a
# session that sleeps through the whole test keeps it up.  `tmux` is
# defined here, not at the top of lib.sh, so that `command -v tmux` (and
# integ_begin's cmd:tmux) still asks whether tmux is installed.  A killed
# server leaves its socket behind in /tmp/tmux-UID: it goes too.
tmux_begin() {
	TMUX_SERVER=$1
	tmux() { command tmux -L "$TMUX_SERVER" -f /dev/null "$@"; }
	tmux new-session -d -s keeper "sleep 86400"
	TMUX_SOCKET=$(tmux display -p -t keeper '#{socket_path}')
	at_exit 'tmux kill-server 2>/dev/null; rm -f "$TMUX_SOCKET"'
}
tmux_open() {
	local cols=$2 rows=$3
	TMUX_SESSION=$1
	tmux kill-session -t "=$TMUX_SESSION" 2>/dev/null
	tmux new-session -d -s "$TMUX_SESSION" -x "$cols" -y "$rows" "$4"
}
screen() { tmux capture-pane -p -t "$TMUX_SESSION"; }
has() { screen | grep -Eq -- "$1"; }
lacks() { ! has "$1"; }
has_text() { screen | grep -qF -- "$1"; }
shows() { wait_until "$1" has "$2"; }
hides() { wait_until "$1" lacks "$2"; }
press() { tmux send-keys -t "$TMUX_SESSION" "$@"; }
type_text() { tmux send-keys -t "$TMUX_SESSION" -l "$1"; }
pane() { tmux display -p -t "$TMUX_SESSION" "#{$1}"; }
