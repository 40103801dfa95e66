/* Building a domain from lodge-hyp's options (build.h): the host's limits,
 * the backends, the cgroup, guest memory, the VM and its vCPUs, the guest
 * kernel and the devices -- everything before a vCPU may run. */
#include "build.h"
#include "emulate.h"
#include "pvm-args.h"
#include "acpi/acpi.h"
#include "boot/boot.h"
#include "cpulist.h"
#include "dev/devices.h"
#include "dev/pci.h"
#include "dev/cpu-hotplug.h"
#include "dev/hotplug.h"
#include "hotplug.h"
#include "log.h"
#include "runtime.h"
#include "save/announce.h"
#include "save/cpu.h"
#include "save/ram.h"
#include "virtio/balloon.h"
#include "virtio/blk.h"
#include "virtio/net.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Map a whole file read-only; the caller unmaps it once loaded. */
static int map_file(const char *path, const char *what, struct boot_image *img)
{
	struct stat st;
	void *p;
	/* O_NONBLOCK: a FIFO given as a kernel must be refused, not waited on. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0) {
		log_err("cannot open %s %s: %s", what, path, strerror(errno));
		return -errno;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
		log_err("%s %s is not a non-empty regular file", what, path);
		close(fd);
		return -EINVAL;
	}
	p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		log_err("cannot read %s %s: %s", what, path, strerror(errno));
		return -errno;
	}
	*img = (struct boot_image){ .data = p, .size = st.st_size, .path = path };
	return 0;
}

static void unmap_file(struct boot_image *img)
{
	if (img->data)
		munmap((void *)img->data, img->size);
	img->data = NULL;
}

static int open_kvm(struct domain *dom)
{
	int rc = kvm_open(dom);

	if (rc == -ENOENT || rc == -ENXIO || rc == -ENODEV)
		log_err("cannot open /dev/kvm: %s (is KVM available on this host?)", strerror(-rc));
	else if (rc == -EACCES || rc == -EPERM)
		log_err("cannot open /dev/kvm: permission denied (run as root or join the kvm group)");
	else if (rc == -EPROTO)
		log_err("/dev/kvm speaks an unsupported KVM API version");
	else if (rc)
		log_err("cannot open /dev/kvm: %s", strerror(-rc));
	return rc;
}

/* One plain sentence on what this host's KVM means for guests. */
int domain_probe(void)
{
	static struct domain dom;      /* large: not for the stack, nor for the data section */

	domain_init(&dom);
	if (open_kvm(&dom))
		return 1;
	if (emulate_host_is_pvm()) {
		size_t i;

		printf("KVM backend: PVM (software, for nested clouds): guest kernel code is emulated "
		       "at about 2,400 ns per instruction, so Lodge Mini-OS runs well; a stock Linux "
		       "kernel boots in 10 to 20 minutes, lodge-hyp completing the instructions PVM's "
		       "emulator refuses and its user space's 64-bit system calls (each an exit: "
		       "thousands of times slower than on hardware; 32-bit int $0x80 is not completed; "
		       "proven on 1 and 2 vCPUs); for speed, hardware KVM or a PVM guest kernel "
		       "(CONFIG_PVM_GUEST).\n");
		printf("Added to a Linux kernel's command line on this host, where not set:\n");
		for (i = 0; i < pvm_linux_nargs; i++)
			printf("  %s\n      %s\n", pvm_linux_args[i].arg, pvm_linux_args[i].why);
	} else if (access("/sys/module/kvm_intel", F_OK) == 0)
		printf("KVM backend: hardware (Intel VT-x): unmodified guests, stock Linux "
		       "kernels included, run at native speed.\n");
	else if (access("/sys/module/kvm_amd", F_OK) == 0)
		printf("KVM backend: hardware (AMD-V): unmodified guests, stock Linux "
		       "kernels included, run at native speed.\n");
	else
		printf("KVM backend: unknown (no kvm_intel, kvm_amd or kvm_pvm module): "
		       "guests may run, at a speed Lodge cannot predict.\n");
	printf("vCPUs per domain: up to %d\n", kvm_max_vcpus(&dom));
	return 0;
}

/* Each vCPU's starting host CPUs: its --vcpu-cpus, else --cpus, else any. */
static int pin_vcpus(struct domain *dom, const struct options *o)
{
	cpu_set_t host;
	char why[256];
	unsigned i;

	if (cpulist_host(&host)) {
		log_err("cannot read this host's CPUs");
		return -EIO;
	}
	for (i = 0; i < o->max_vcpus; i++) {
		const char *list = o->vcpu_cpus[i] ? o->vcpu_cpus[i] : o->cpus;
		struct vcpu *v = &dom->vcpus[i];

		if (!list)
			continue;
		if (cpulist_parse(list, &host, &v->pin, why, sizeof(why))) {
			log_err("%s: %s", o->vcpu_cpus[i] ? "--vcpu-cpus" : "--cpus", why);
			return -EINVAL;
		}
		v->pinned = true;
	}
	return 0;
}

/* What only the host can say: its RAM and KVM's vCPU limit.  The schema's
 * limits were checked as the options entered (options.c). */
static int check_limits(struct domain *dom, const struct options *o)
{
	unsigned long host_mib = (unsigned long)((uint64_t)sysconf(_SC_PHYS_PAGES) *
						 sysconf(_SC_PAGE_SIZE) >> 20);
	int max = kvm_max_vcpus(dom);

	if (o->memory_mib > host_mib) {
		log_err("--memory %lu MiB is more than this host has (%lu MiB)", o->memory_mib, host_mib);
		return -EINVAL;
	}
	if (o->maxmem_mib > host_mib) {
		log_err("--maxmem %lu MiB is more than this host has (%lu MiB)", o->maxmem_mib, host_mib);
		return -EINVAL;
	}
	if (o->vcpus > (unsigned long)max) {
		log_err("--vcpus %lu is out of range: 1 to %d on this host", o->vcpus, max);
		return -EINVAL;
	}
	if (o->max_vcpus > (unsigned long)max) {
		log_err("--max-vcpus %lu is out of range: 1 to %d on this host", o->max_vcpus, max);
		return -EINVAL;
	}
	return pin_vcpus(dom, o);
}

/* The disks and vifs the options parsed, copied into the domain's own
 * and each opened first, so one that is missing or in use stops us
 * before any device exists. */
static int open_backends(struct domain *dom, const struct options *o)
{
	struct stat ist;
	/* A live migration's stream is a socket (as save_load tells them). */
	bool incoming_live = o->incoming_fd >= 0 && fstat(o->incoming_fd, &ist) == 0 && S_ISSOCK(ist.st_mode);
	char err[512];
	unsigned i;
	int rc;

	for (i = 0; i < o->ndisks; i++) {
		struct disk *d = &dom->disks[i];

		*d = o->disks[i];
		dom->ndisks = i + 1;
		/* Migrating in: the sender writes the disk until it lets go.
		 * A saved file (or its decompressor's pipe) has no sender: its
		 * disks are locked now, before the guest runs, as a new
		 * domain's are. */
		d->lock_later = incoming_live;
		if ((rc = disk_open(d, err, sizeof(err)))) {
			log_err("%s", err);
			return rc;
		}
	}
	for (i = 0; i < o->nnics; i++) {
		struct tap *t = &dom->nics[i];

		*t = o->nics[i];
		dom->nnics = i + 1;
		if ((rc = tap_open(t, err, sizeof(err)))) {
			log_err("%s", err);
			return rc;
		}
	}
	return 0;
}

static int setup_devices(struct domain *dom, struct uart **com1)
{
	uint32_t ballooned = (uint32_t)((dom->maxmem_mib - dom->memory_mib) << (20 - BALLOON_PAGE_SHIFT));
	unsigned i;
	int rc;

	*com1 = uart_create(dom, PORT_COM1, IRQ_COM1);
	if (!*com1)
		return -ENOMEM;
	if ((rc = acpi_pm_init(dom)) || (rc = i8042_init(dom)) ||
	    (rc = rtc_init(dom)) || (rc = post_init(dom)) || (rc = pci_init()) ||
	    (rc = pcihp_init()) || (rc = cpuhp_init(dom)))
		return rc;
	/* In order: the guest sees them as vda, vdb, ... */
	for (i = 0; i < dom->ndisks; i++) {
		struct virtio_dev *vdev;

		if ((rc = virtio_blk_create_at(dom, &dom->disks[i], dom->disks[i].slot, &vdev)))
			return rc;
		hotplug_note_disk(&dom->disks[i], vdev);
	}
	for (i = 0; i < dom->nnics; i++) {
		struct virtio_dev *vdev;

		if ((rc = virtio_net_create_at(dom, &dom->nics[i], &vdev)))
			return rc;
		hotplug_note_vif(&dom->nics[i], vdev);
	}
	/* Disks and NICs may be hot-unplugged; the balloon may not. */
	for (i = DOMAIN_PCI_SLOT_MIN; i <= DOMAIN_PCI_SLOT_MAX; i++)
		if (pci_present_mask() & (1u << i))
			pcihp_plugged(pci_slot_dev(i), false);
	/* In the last slot (DOMAIN_BALLOON_SLOT). The guest boots with
	 * maxmem of RAM and the balloon asks at once for all above memory. */
	if ((rc = virtio_balloon_create(dom, ballooned, &dom->balloon)))
		return rc;
	return announce_register(dom);
}

/* Load the kernel (and initrd) and the ACPI tables; set vCPU 0 to enter. */
static int load_guest(struct domain *dom, const struct options *o)
{
	struct boot_params_in in = { .cmdline = o->cmdline };
	struct boot_entry entry;
	char err[256] = "";
	int rc;

	rc = acpi_build(&dom->mem, &(struct acpi_platform){ .ncpus = dom->nvcpus,
						       .nonline = vcpu_online_count(dom) }, &in.rsdp_gpa);
	if (rc) {
		log_err("cannot build the ACPI tables: %s", strerror(-rc));
		return rc;
	}
	if ((rc = map_file(o->kernel, "kernel", &in.kernel)))
		return rc;
	if (o->initrd && (rc = map_file(o->initrd, "initrd", &in.initrd))) {
		unmap_file(&in.kernel);
		return rc;
	}
	/* On a PVM host, a Linux kernel gets what keeps it off the slowest
	 * paths (pvm-args.c), unless the user set each one. */
	if (emulate_host_is_pvm() && boot_image_is_linux(&in.kernel)) {
		static char line[DOMAIN_CMDLINE_MAX];
		int added = pvm_args_apply(o->cmdline, o->max_vcpus > 1, line, sizeof(line));

		if (added > 0) {
			in.cmdline = line;
			log_info("a Linux kernel on a PVM host: its command line is \"%s\" "
				 "(lodge-hyp --probe says why each argument is added)", line);
		} else if (added < 0) {
			log_warn("a Linux kernel on a PVM host: no room on its command line for the "
				 "arguments that keep it off the slowest paths (lodge-hyp --probe)");
		}
	}
	rc = boot_load(&dom->mem, &in, &entry, err, sizeof(err));
	unmap_file(&in.kernel);
	unmap_file(&in.initrd);
	if (rc) {
		log_err("%s", err[0] ? err : strerror(-rc));
		return rc;
	}
	rc = vcpu_set_boot_state(&dom->vcpus[0], &entry);
	if (rc)
		log_err("cannot set the boot vCPU's registers: %s", strerror(-rc));
	return rc;
}

/* Name the cgroup in the runtime directory's cgroup file (root's only):
 * the agent removes it from there if this process is killed. */
static void note_cgroup(const char *dir, const char *cgroup_dir)
{
	char path[4200];
	FILE *f;
	int fd;

	runtime_file_path(path, sizeof(path), dir, RT_CGROUP);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
		return;
	if ((f = fdopen(fd, "w"))) {
		fprintf(f, "%s\n", cgroup_dir);
		fclose(f);
	} else {
		close(fd);
	}
}

/* The domain's cgroup, with the weight and cap asked for.  Its path goes in
 * the runtime directory before it is made, so that a kill at any moment
 * leaves nothing the agent does not know of. */
static int join_cgroup(struct domain *dom, const struct options *o, const char *dir)
{
	struct cgroup_cpu where;
	char path[4200], why[512];
	int rc;

	if (dir[0] && cgroup_cpu_open(&where, o->cgroup) == 0)
		note_cgroup(dir, where.dir);
	if ((rc = sched_cgroup_join(dom, o->cgroup, why, sizeof(why)))) {
		if (dir[0]) {
			runtime_file_path(path, sizeof(path), dir, RT_CGROUP);
			unlink(path);
		}
		/* No controller, or not ours to use: without a weight or cap
		 * asked for, the domain runs without (lodge sched says so). */
		if (!o->sched_given && (rc == -ENODEV || rc == -EACCES || rc == -EPERM || rc == -EROFS)) {
			log_warn("domain %s runs without weight or cap: %s", dom->name, why);
			return 0;
		}
		log_err("%s", why);
		return rc;
	}
	if ((rc = sched_set(dom, o->cpu_weight, o->cap))) {
		log_err("cannot set weight %lu and cap %lu%% in %s: %s", o->cpu_weight, o->cap,
			dom->cgroup.dir, strerror(-rc));
		return rc;
	}
	/* lodge sched writes them later, from inside the sandbox. */
	if ((rc = cgroup_cpu_keep_open(&dom->cgroup))) {
		log_err("cannot open the knobs of %s: %s", dom->cgroup.dir, strerror(-rc));
		return rc;
	}
	return 0;
}

int domain_build(struct domain *dom, const struct options *o, const char *dir, struct uart **com1)
{
	unsigned i;
	int rc;

	domain_init(dom);
	if ((rc = open_kvm(dom)) || (rc = check_limits(dom, o)) || (rc = open_backends(dom, o)))
		return rc;
	dom->nvcpus = o->max_vcpus;
	atomic_store(&dom->online, o->vcpus >= 64 ? ~0ull : (1ull << o->vcpus) - 1);
	snprintf(dom->name, sizeof(dom->name), "%s", o->name);
	dom->id = o->id;
	dom->kernel = o->kernel;
	dom->memory_mib = o->memory_mib;
	dom->maxmem_mib = o->maxmem_mib ? o->maxmem_mib : o->memory_mib;
	dom->on_poweroff = o->on_poweroff;
	dom->on_reboot = o->on_reboot;
	dom->on_crash = o->on_crash;
	dom->cpu_weight = DOMAIN_CPU_WEIGHT_DEFAULT;
	if (o->cgroup && (rc = join_cgroup(dom, o, dir)))
		return rc;

	if (guest_mem_init(&dom->mem, (uint64_t)dom->maxmem_mib << 20)) {
		rc = -errno;
		log_err("cannot map %lu MiB of guest memory: %s", dom->maxmem_mib, strerror(-rc));
		return rc;
	}
	if ((rc = guest_mem_advise(&dom->mem, o->ksm, o->hugepages))) {
		log_err("cannot ask for %s on guest memory: %s (is it built into this kernel?)",
			o->ksm ? "same-page merging (--ksm)" : "transparent huge pages (--hugepages)",
			strerror(-rc));
		return rc;
	}
	if ((rc = kvm_create_vm(dom))) {
		log_err("cannot create the KVM virtual machine: %s", strerror(-rc));
		return rc;
	}
	for (i = 0; i < dom->nvcpus; i++)
		if ((rc = vcpu_create(dom, i))) {
			log_err("cannot create vcpu%u: %s", i, strerror(-rc));
			return rc;
		}
	if ((rc = cpu_state_register(dom))) {
		log_err("cannot register the CPU state for save/restore: %s", strerror(-rc));
		return rc;
	}
	/* Migrating in: the stream brings memory and registers instead. */
	if (o->incoming_fd < 0 && (rc = load_guest(dom, o)))
		return rc;
	if ((rc = setup_devices(dom, com1))) {
		log_err("cannot set up devices: %s", strerror(-rc));
		return rc;
	}
	if ((rc = ram_init(dom)))
		log_warn("cannot open /proc/self/pagemap (%s): a save will look at every page",
			 strerror(-rc));
	return 0;
}
