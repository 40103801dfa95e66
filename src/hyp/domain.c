/* Ending a domain (domain.h): the one way the vCPUs, the devices and the
 * control loop say that the domain is over; run.c and the supervisor only
 * look at how it ended. */
#include "domain.h"
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void domain_init(struct domain *dom)
{
	/* Field by field: writing the whole (zero) struct would make every
	 * page of its disk and vCPU arrays resident, used or not. */
	dom->kvm_fd = dom->vm_fd = -1;
	dom->end_eventfd = -1;
	atomic_store(&dom->end, DOMAIN_RUNNING);
	pthread_mutex_init(&dom->pause_lock, NULL);
	pthread_cond_init(&dom->pause_cond, NULL);
}

void domain_end(struct domain *dom, enum domain_end how, const char *fmt, ...)
{
	char reason[sizeof(dom->end_reason)];
	int expected = DOMAIN_RUNNING;
	uint64_t one = 1;
	va_list ap;

	/* The reason is written before end is published, so whoever sees
	 * end set also sees the reason. */
	if (atomic_exchange(&dom->end_claimed, true))
		return;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	/* It goes out as a line of status replies: it may quote a save image. */
	text_escape(dom->end_reason, sizeof(dom->end_reason), reason);
	atomic_compare_exchange_strong(&dom->end, &expected, how);
	if (dom->end_eventfd >= 0 && write(dom->end_eventfd, &one, sizeof(one)) < 0) {
		/* the eventfd cannot overflow with one write */
	}
}
