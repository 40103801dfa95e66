#!/bin/bash
# Install the Debian packages named on the command line that are missing.
# Idempotent and quiet when everything is present.
set -eu
missing=()
for p in "$@"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
# lodge-hyp's sandbox runs each domain as this user (its --user default;
# nobody where it does not exist).
lodge_user() {
	[ "$(id -u)" -eq 0 ] || return 0
	getent passwd lodge >/dev/null && return 0
	echo "deps: creating the system user lodge (lodge-hyp's sandbox)"
	useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
		--user-group lodge
}
if [ ${#missing[@]} -eq 0 ]; then
	lodge_user
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages: ${missing[*]} (run 'make deps' as root)" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# cloud-init is here for `cloud-init schema` (Lodge checks the seeds it
# makes for guests), not to configure this host: installed by us, it is
# switched off for the host's own boots (cloud-init(1)'s documented
# switch), so a host that runs in a cloud keeps its keys and network.
if [[ " ${missing[*]} " == *" cloud-init "* ]] && [ ! -e /etc/cloud/cloud-init.disabled ]; then
	echo "deps: cloud-init is for checking guests' seeds: disabled for this host (/etc/cloud/cloud-init.disabled)"
	echo "made by Lodge's make deps: cloud-init here only checks guests' seeds" >/etc/cloud/cloud-init.disabled
fi
lodge_user
