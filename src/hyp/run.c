/* One boot of a domain (run.h): built (build.c), its vCPUs started
 * parked, the process confined, then the guest let run while the control
 * loop serves the host until the domain is over. */
#include "run.h"
#include "footprint.h"
#include "bootload.h"
#include "build.h"
#include "console.h"
#include "cpulist.h"
#include "crash.h"
#include "emulate.h"
#include "ctl/ctl.h"
#include "domain.h"
#include "events.h"
#include "log.h"
#include "netwatch/netwatch.h"
#include "runtime.h"
#include "save/announce.h"
#include "save/save.h"
#include "supervise.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* No guest instruction runs before the sandbox is up. */
int run_domain(struct options *o, struct sandbox *sb, const char *dir, int listen_fd, int ready_fd)
{
	static struct domain the_domain;     /* large: not for the stack */
	struct domain *dom = &the_domain;
	struct detached_io io = { -1, -1 };
	struct uart *com1;
	struct timespec ts;
	char log_path[4200], boot_why[1400];
	sigset_t sigs;
	int sig_fd, status;
	bool destroyed, incoming_live = false;
	unsigned i;

	sandbox_early(sb);
	/* Each boot from the disk reads it anew (a restart too); one restored
	 * from a stream boots nothing. */
	if (o->bootloader_disk && o->incoming_fd < 0 && bootload(o, sb, dir, boot_why, sizeof(boot_why))) {
		log_err("%s", boot_why);
		/* A restart: nobody waits to hear it, and lodge-hyp.log goes
		 * with the runtime directory; the event log keeps why. */
		if (ready_fd < 0)
			event_send(EV_FAILED, "lodge-hyp", "%s", boot_why);
		return DOMAIN_ERROR;
	}
	if (domain_build(dom, o, dir, &com1))
		return DOMAIN_ERROR;

	/* Signals that end the domain arrive through a signalfd in the main
	 * loop; blocked before any thread starts so every thread inherits it. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	sig_fd = signalfd(-1, &sigs, SFD_CLOEXEC);
	dom->end_eventfd = eventfd(0, EFD_CLOEXEC);
	if (sig_fd < 0 || dom->end_eventfd < 0) {
		log_err("cannot create event descriptors: %s", strerror(errno));
		return DOMAIN_ERROR;
	}
	runtime_file_path(log_path, sizeof(log_path), dir, RT_CONSOLE_LOG);
	status = o->runtime_dir
		? console_init(-1, -1, log_path, (size_t)o->console_log_kib << 10)
		: console_init(STDIN_FILENO, STDOUT_FILENO, NULL, 0);
	if (status) {
		log_err("cannot start the console: %s", strerror(-status));
		return DOMAIN_ERROR;
	}
	if ((status = ctl_keep_open()) || (status = cpulist_host_keep_open())) {
		log_err("cannot open /proc/self/statm or the host's CPU list: %s", strerror(-status));
		return DOMAIN_ERROR;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	dom->start_ns = (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	dom->start_time = time(NULL);
	/* Parked from the start: each thread exists (its /proc entry too)
	 * but enters the guest only once unpaused, after the sandbox. */
	dom->paused = true;
	if (vcpu_start_all(dom))
		return DOMAIN_ERROR;
	vcpu_pause_all(dom);
	for (i = 0; i < dom->nvcpus; i++)
		if ((status = sched_vcpu_keep_open(&dom->vcpus[i]))) {
			domain_end(dom, DOMAIN_ERROR, "cannot open vcpu%u's /proc files: %s", i, strerror(-status));
			break;
		}
	/* Only a managed domain has a control socket to be asked for what the
	 * watcher learns; standalone, it would watch for nobody.  Before the
	 * sandbox: capturing needs CAP_NET_RAW. */
	if (!status && o->runtime_dir && dom->nnics)
		dom->netwatch = netwatch_start(dom->nics, dom->nnics);
	if (ready_fd >= 0)
		detached_io_open(&io, dir);
	if (o->incoming_fd >= 0)
		save_load_prepare((int)o->incoming_fd);
	if (!status && (status = sandbox_enter(sb)))
		domain_end(dom, DOMAIN_ERROR, "cannot enter the sandbox: %s", strerror(-status));
	if (!status && o->incoming_fd >= 0) {
		char why[512];

		/* Everything the guest was, instead of a boot: its RAM, its
		 * vCPUs, its devices, before any vCPU runs.  Read inside the
		 * sandbox (the stream is untrusted input), and with everything
		 * else ready, so that a migration's downtime is the load alone. */
		if ((status = save_load(dom, (int)o->incoming_fd, &incoming_live, why, sizeof(why))))
			domain_end(dom, DOMAIN_ERROR, "cannot restore domain %s: %s", dom->name, why);
	}
	if (status) {
		log_err("%s", dom->end_reason);
		vcpu_stop_all(dom);
		return DOMAIN_ERROR;
	}
	/* --paused: not one guest instruction before the host says unpause. */
	if (!o->paused)
		vcpu_unpause_all(dom);
	if (o->incoming_fd >= 0) {
		/* Migrated in: tell the sender the guest runs (its downtime
		 * ends here), and the network where the guest is now. */
		if (incoming_live && send((int)o->incoming_fd, &(char){ SAVE_RUNNING }, 1, MSG_NOSIGNAL) != 1)
			log_debug("the sender did not hear that the guest runs: %s", strerror(errno));
		close((int)o->incoming_fd);
		announce_send();
	}
	if (ready_fd >= 0) {
		/* Only the first boot has a caller waiting: a restart is no
		 * new domain (its reboot or crash is in the log already). */
		detach_ready(ready_fd, &io);
		event_send(o->incoming_fd < 0 ? EV_CREATED : incoming_live ? EV_MIGRATED_IN : EV_RESTORED, o->creator,
			   "id %u%s", dom->id, o->paused ? ", paused" : "");
	}
	if (o->incoming_fd >= 0)
		log_info("domain %s restored%s", dom->name, incoming_live ? " from a live migration" : "");
	sandbox_test_forbidden(sb);
	/* Start-up is over: from here on this process maps what the
	 * guest's devices and the control socket run. */
	footprint_trim();
	destroyed = ctl_run(dom, com1, o->runtime_dir ? -1 : STDIN_FILENO, listen_fd, sig_fd, &o->access);
	vcpu_stop_all(dom);
	emulate_log_counts();
	crash_report(dom);
	netwatch_stop(dom->netwatch);
	dom->netwatch = NULL;
	console_flush(1000);
	console_restore();

	status = atomic_load(&dom->end);
	if (status == DOMAIN_POWEROFF || status == DOMAIN_REBOOT)
		log_info("%s", dom->end_reason);
	else
		log_err("%s", dom->end_reason);
	/* A fresh process is a fresh machine: new memory, new vCPUs,
	 * devices reset, the same runtime directory, socket and log. */
	if (!destroyed && domain_action_restarts(domain_action_for(dom)))
		return EXIT_RESTART;
	return status;
}
