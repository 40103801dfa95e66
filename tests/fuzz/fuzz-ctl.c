/* The control socket's request parser (src/hyp/ctl/ctl-parse.c) against any bytes a
 * client sends.  The input is split into lines as ctl_run splits what it
 * receives (at '\n'; a line of PROTO_LINE_MAX bytes without one ends the
 * connection), each line goes to ctl_parse_request as ctl_run hands it
 * every line, and the arguments go on to what the dispatcher runs on
 * them without a vCPU: the command table's look-up, mem-set (domain_mem_set on a
 * domain with a real virtio-balloon, maxmem 1024 MiB, booted with 256)
 * and vcpu-pin's CPU list (cpulist_parse).
 * Properties: a parsed request has 2 to CTL_MAX_ARGS words, none empty
 * or holding a blank, all inside the line, the first "lodge/1"-like; a
 * refusal is one "error ...\n" line; mem-set either sets the balloon's
 * target to exactly what was asked or says why not; a CPU list parsed
 * is not empty and names only host CPUs. */
#include "fuzz.h"
#include "cpulist.h"
#include "ctl/ctl.h"
#include "dev/pci.h"
#include "domain.h"
#include "log.h"
#include "proto.h"
#include "virtio/balloon.h"

#include <sched.h>
#include <string.h>

static struct domain dom = { DOMAIN_DEFAULTS, .name = "fuzz", .memory_mib = 256, .maxmem_mib = 1024 };
static cpu_set_t host;

static void one_line(char *line, size_t len)
{
	char *argv[CTL_MAX_ARGS] = { 0 }, err[PROTO_LINE_MAX + 128], why[256];
	int argc = ctl_parse_request(line, argv, err, sizeof(err)), i;

	if (argc < 0) {
		FUZZ_CHECK(strncmp(err, "error ", 6) == 0, "a refusal that is not an error line");
		FUZZ_CHECK(strchr(err, '\n') == err + strlen(err) - 1, "a refusal not exactly one line");
		return;
	}
	FUZZ_CHECK(argc >= 2 && argc <= CTL_MAX_ARGS, "argc out of range");
	FUZZ_CHECK(strncmp(argv[0], PROTO_PREFIX, strlen(PROTO_PREFIX)) == 0, "a request without the prefix");
	for (i = 0; i < argc; i++) {
		FUZZ_CHECK(argv[i] >= line && argv[i] + strlen(argv[i]) <= line + len, "a word outside the line");
		FUZZ_CHECK(argv[i][0] && !strpbrk(argv[i], " \t"), "an empty word or one with a blank");
	}
	ctl_command_find(argv[1]);
	if (strcmp(argv[1], "mem-set") == 0) {
		struct balloon_info bi;

		why[0] = '\0';
		if (domain_mem_set(&dom, argc > 2 ? argv[2] : NULL, why, sizeof(why)) == 0) {
			unsigned long mib = strtoul(argv[2], NULL, 10);

			virtio_balloon_info(dom.balloon, &bi);
			FUZZ_CHECK(mib >= 32 && mib <= 1024 && bi.target_pages == (1024 - mib) * 256,
				   "mem-set set another target than asked");
		} else {
			FUZZ_CHECK(why[0], "mem-set refused without saying why");
		}
	} else if (strcmp(argv[1], "vcpu-pin") == 0 && argc > 3) {
		cpu_set_t set;
		int cpu;

		why[0] = '\0';
		if (cpulist_parse(argv[3], &host, &set, why, sizeof(why)) == 0) {
			FUZZ_CHECK(CPU_COUNT(&set) > 0, "an empty CPU list accepted");
			for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
				FUZZ_CHECK(!CPU_ISSET(cpu, &set) || CPU_ISSET(cpu, &host), "a CPU the host lacks");
		} else {
			FUZZ_CHECK(why[0], "a CPU list refused without saying why");
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	size_t off = 0;

	if (!ready) {
		log_init("fuzz-ctl");
		log_set_level(LOG_ERR);
		FUZZ_CHECK(cpulist_host(&host) == 0, "cpulist_host");
		FUZZ_CHECK(pci_init() == 0, "pci_init");
		FUZZ_CHECK(virtio_balloon_create(&dom, 768 * 256, &dom.balloon) == 0, "virtio_balloon_create");
		ready = true;
	}
	while (off < size) {
		const uint8_t *nl = memchr(data + off, '\n', size - off);
		size_t len = nl ? (size_t)(nl - (data + off)) : size - off;

		if (len >= PROTO_LINE_MAX)
			return 0;                /* "request longer than": the client is closed */
		if (!nl)
			return 0;                /* waits for the rest of the line */
		/* Exactly the line's bytes on the heap (ASan sees a read past it). */
		{
			char *line = malloc(len + 1);

			memcpy(line, data + off, len);
			line[len] = '\0';
			one_line(line, len);
			free(line);
		}
		off += len + 1;
	}
	return 0;
}
